/**
 * The validate workflow: refuses a damaged snapshot, checks every entry against its type's template
 * schema, and returns the report (every invalid entry with name, type, JSON pointer and message).
 * The catalog is the shipped one (or a `--schemas` folder), or an environment's own templates, fetched
 * once the snapshot's types are known.
 */
import type { ClientFactory, EnvironmentResolver } from '../api/client-factory.js';
import { createReferenceCollector, type ReferenceNeeds } from '../connections/references.js';
import { loadShippedCatalog } from '../schema/catalog.js';
import { type CatalogSource, type ValidationReport, validateSnapshot } from '../schema/validate-snapshot.js';
import { loadCatalogFromEnvironment } from './target-catalog.js';

/** Where the template schemas come from. */
export type CatalogChoice =
  /** The shipped schemas/templates, or this folder (absolute). */
  | { readonly kind: 'shipped'; readonly dir: string | undefined }
  /** The templates of the environment that {@link ValidatePorts.resolveTemplatesSource} resolves. */
  | { readonly kind: 'environment' };

/** What {@link validateSnapshotFile} checks. */
export interface ValidateOptions {
  /** The snapshot (absolute). */
  readonly snapshot: string;
  /** The snapshot as the user typed it, for messages. */
  readonly label: string;
  readonly catalog: CatalogChoice;
}

/** The outside world of {@link validateSnapshotFile}. */
export interface ValidatePorts {
  /** Resolves the environment whose templates are used (only called for `{kind: 'environment'}`). */
  readonly resolveTemplatesSource: EnvironmentResolver;
  readonly createClient: ClientFactory;
  readonly signal: AbortSignal;
}

/** A validation report, with what the entries need in a target (scanner groups, credentials, certificates). */
export interface ValidateResult extends ValidationReport {
  readonly references: ReferenceNeeds;
}

/** Validate a snapshot file; the report says whether it is valid, and what a target must hold. */
export async function validateSnapshotFile(
  options: ValidateOptions,
  ports: ValidatePorts,
): Promise<ValidateResult> {
  const references = createReferenceCollector();
  let closeClient: (() => void) | undefined;
  let source: CatalogSource;
  if (options.catalog.kind === 'environment') {
    source = async (types) => {
      const environment = await ports.resolveTemplatesSource();
      const client = ports.createClient(environment);
      closeClient = () => client.close();
      return loadCatalogFromEnvironment(client, types);
    };
  } else {
    source = await loadShippedCatalog(options.catalog.dir);
  }
  try {
    const report = await validateSnapshot(options.snapshot, source, {
      signal: ports.signal,
      label: options.label,
      onEntry: (entry) => references.add({ name: entry.name, type: entry.type, body: entry }),
    });
    return { ...report, references: references.needs() };
  } finally {
    closeClient?.();
  }
}
