/**
 * The template catalog of an environment: its own connector templates, one request a type, sent together
 * (`validate --templates-from E`, `import --templates-from-target`), handed to `schema/` as data.
 */
import type { HttpClient } from '../api/http.js';
import { getConnectorTemplate } from '../api/templates.js';
import { loadCatalogOfTemplates, type TemplateCatalog } from '../schema/catalog.js';

/**
 * Fetch the templates of `types` (each once) and build their catalog, in name order. The requests go
 * out together: each waits on the service, not on this process (one per connector type of the snapshot:
 * a few dozen at most, the number of templates the service has).
 */
export async function loadCatalogFromEnvironment(
  client: HttpClient,
  types: readonly string[],
): Promise<TemplateCatalog> {
  const names = [...new Set(types)].sort();
  const fetched = await Promise.all(
    names.map(async (type) => {
      const template = await getConnectorTemplate(client, type);
      // The service names the template by type; trust the type asked for, not a differing `name`.
      return template === undefined ? [] : [{ ...template, name: type }];
    }),
  );
  return loadCatalogOfTemplates(fetched.flat());
}
