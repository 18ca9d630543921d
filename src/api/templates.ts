/** Connector templates (api-notes). STUB: signatures fixed, bodies being written (issue #2). */
import type { HttpClient } from './http.js';
import type { ConnectorTemplate } from './types.js';

/** GET /ds-connections-types/template/{type}; undefined when the service has no such type (404/400). */
export declare function getConnectorTemplate(client: HttpClient, type: string): Promise<ConnectorTemplate | undefined>;
