/** Connector templates (api-notes: `GET /ds-connections-types/template/{type}`). */
import type { ConnectorTemplate } from '../model/template.js';
import { isRecord } from '../own-property.js';
import type { HttpClient } from './http.js';
import { requestOrAbsent } from './http-options.js';
import { unexpectedShape } from './paging.js';

/** The template itself (`{name, fields}`, as real deployments send it) or in a `{data: ...}` envelope. */
function readTemplate(body: unknown, path: string): ConnectorTemplate {
  const candidates = [body, isRecord(body) ? body.data : undefined];
  for (const c of candidates) {
    if (isRecord(c) && Array.isArray(c.fields)) {
      const fields = c.fields.filter(
        (f): f is Record<string, unknown> => isRecord(f) && typeof f.apiName === 'string',
      );
      return { ...c, name: typeof c.name === 'string' ? c.name : '', fields } as unknown as ConnectorTemplate;
    }
  }
  throw unexpectedShape(path, 'no template fields array');
}

/** GET /ds-connections-types/template/{type}; undefined when the service has no such type (404/400). */
export async function getConnectorTemplate(
  client: HttpClient,
  type: string,
): Promise<ConnectorTemplate | undefined> {
  const path = `/ds-connections-types/template/${encodeURIComponent(type)}`;
  const answer = await requestOrAbsent(
    client,
    { method: 'GET', path, retry: 'safe' },
    (error) => error.status === 404 || error.status === 400,
  );
  return answer.kind === 'absent' ? undefined : readTemplate(answer.value, path);
}
