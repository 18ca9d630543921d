/**
 * The template catalog of an environment: its own connector templates, fetched one type at a time
 * (`validate --templates-from E`, `import --templates-from-target`), handed to `schema/` as data.
 */
import type { HttpClient } from '../api/http.js';
import { getConnectorTemplate } from '../api/templates.js';
import type { ConnectorTemplate } from '../model/template.js';
import { loadCatalogOfTemplates, type TemplateCatalog } from '../schema/catalog.js';

/** Fetch the templates of `types` (each once, in name order) and build their catalog. */
export async function loadCatalogFromEnvironment(
  client: HttpClient,
  types: readonly string[],
): Promise<TemplateCatalog> {
  const templates: ConnectorTemplate[] = [];
  for (const type of [...new Set(types)].sort()) {
    const template = await getConnectorTemplate(client, type);
    // The service names the template by type; trust the type asked for, not a differing `name`.
    if (template !== undefined) templates.push({ ...template, name: type });
  }
  return loadCatalogOfTemplates(templates);
}
