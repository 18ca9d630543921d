/**
 * The `profiles create` workflow: read and check a profile document, refuse a one-time profile without
 * `allowRun` before the environment is even opened, then create it.
 */
import type { ClientFactory, EnvironmentResolver } from '../api/client-factory.js';
import type { ScanProfile } from '../model/scan-profile.js';
import { assertWriteConfirmed } from '../protected.js';
import { assertRunAllowed, createProfile } from './create.js';
import { readProfileFile } from './validate-profile.js';

/** What {@link createProfileFromFile} does; `file` is absolute. */
export interface CreateProfileFromFileOptions {
  readonly file: string;
  readonly allowRun: boolean;
  /** `--confirm`: the name of a protected environment. */
  readonly confirm: string | undefined;
}

/** The outside world of {@link createProfileFromFile}. */
export interface CreateProfilePorts {
  readonly resolveEnvironment: EnvironmentResolver;
  readonly createClient: ClientFactory;
  readonly signal: AbortSignal;
}

/** The created profile, and whether it is one-time (its scan has started). */
export interface CreateProfileResult {
  readonly created: ScanProfile;
  readonly oneTime: boolean;
}

/** Create the profile of a file in the environment. */
export async function createProfileFromFile(
  options: CreateProfileFromFileOptions,
  ports: CreateProfilePorts,
): Promise<CreateProfileResult> {
  const document = await readProfileFile(options.file);
  // Refused before the environment is even opened: nothing is sent for a one-time profile without allowRun.
  assertRunAllowed(
    [{ name: String(document.name), singleRun: document.isSingleRunScan === true }],
    options.allowRun,
  );
  const environment = await ports.resolveEnvironment();
  const client = ports.createClient(environment);
  try {
    assertWriteConfirmed(client.environment, options.confirm);
    const created = await createProfile(client, document, {
      allowRun: options.allowRun,
      signal: ports.signal,
    });
    return { created, oneTime: document.isSingleRunScan === true };
  } finally {
    client.close();
  }
}
