/**
 * The template catalog of an environment: its own connector templates, one request a type, sent together
 * (`validate --templates-from E`, `import --templates-from-target`), handed to `schema/` as data.
 */
import type { HttpClient } from '../api/http.js';
import { getConnectorTemplate } from '../api/templates.js';
import type { ConnectorTemplate } from '../model/template.js';
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
  const fetched = await Promise.all(names.map((type) => getConnectorTemplate(client, type)));
  const templates: ConnectorTemplate[] = [];
  names.forEach((type, i) => {
    const template = fetched[i];
    // The service names the template by type; trust the type asked for, not a differing `name`.
    if (template !== undefined) templates.push({ ...template, name: type });
  });
  return loadCatalogOfTemplates(templates);
}
