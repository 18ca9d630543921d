import type { HttpClient } from '../api/http.js';
import { getConnectorTemplate } from '../api/templates.js';
import { loadCatalogOfTemplates, type TemplateCatalog } from '../schema/catalog.js';

/** An environment's catalog of `types` templates (`--templates-from E`): a request a type, sent together. */
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
