import type { HttpClient } from '../api/http.js';
import { getConnectorTemplate } from '../api/templates.js';
import { loadCatalogOfTemplates, type TemplateCatalog } from '../schema/catalog.js';

/**
 * The catalog of an environment's own templates of `types` (`--templates-from E`). The requests go out
 * together: one per connector type, a few dozen at most, each waiting on the service.
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
