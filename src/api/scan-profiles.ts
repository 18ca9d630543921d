/** Scan profiles (spec 4.2, 4.3). STUB: signatures fixed, bodies being written (issue #2). */
import type { HttpClient } from './http.js';
import type { ScanProfile } from './types.js';

/** POST /scanProfiles. Not retried (it creates, and a one-time profile starts a scan). */
export declare function createScanProfile(client: HttpClient, profile: Record<string, unknown>): Promise<ScanProfile>;

/** GET /scanProfiles/{id}. 400/404 become ApiError with the service's message. */
export declare function getScanProfile(client: HttpClient, id: string): Promise<ScanProfile>;
