/** The validate workflow: every entry against its type's template schema, and the references it needs. */
import type { ClientFactory, EnvironmentResolver } from '../api/client-factory.js';
import type { HttpClient } from '../api/http.js';
import {
  checkReferenceNeeds,
  createReferenceCollector,
  describeReferenceWarnings,
  type ReferenceNeeds,
} from '../connections/references.js';
import type { Problem } from '../errors.js';
import { loadShippedCatalog } from '../schema/catalog.js';
import { type CatalogSource, type ValidationReport, validateSnapshot } from '../schema/validate-snapshot.js';
import { loadCatalogFromEnvironment } from './target-catalog.js';
import { fetchTargetReferences } from './target-references.js';

/** The shipped schemas (or a `--schemas` folder), or the templates-source environment's own. */
export type CatalogChoice =
  | { readonly kind: 'shipped'; readonly dir: string | undefined }
  | { readonly kind: 'environment' };

/** What {@link validateSnapshotFile} checks. */
export interface ValidateOptions {
  /** Absolute. */
  readonly snapshot: string;
  /** As the user typed it. */
  readonly label: string;
  readonly catalog: CatalogChoice;
}

/** The outside world of {@link validateSnapshotFile}. */
export interface ValidatePorts {
  /** Called only for `{kind: 'environment'}`. */
  readonly resolveTemplatesSource: EnvironmentResolver;
  readonly createClient: ClientFactory;
  readonly signal: AbortSignal;
}

/** A validation report, with what the entries need in a target. */
export interface ValidateResult extends ValidationReport {
  readonly references: ReferenceNeeds;
  /** With `--templates-from E`: the references E lacks (problems) and what it could not check. */
  readonly referenceCheck:
    | { readonly problems: readonly Problem[]; readonly warnings: readonly string[] }
    | undefined;
}

/** Validate a snapshot file (a damaged one is refused). */
export async function validateSnapshotFile(
  options: ValidateOptions,
  ports: ValidatePorts,
): Promise<ValidateResult> {
  const references = createReferenceCollector();
  let client: HttpClient | undefined;
  const source: CatalogSource =
    options.catalog.kind === 'shipped'
      ? await loadShippedCatalog(options.catalog.dir)
      : async (types) => {
          client = ports.createClient(await ports.resolveTemplatesSource());
          return loadCatalogFromEnvironment(client, types);
        };
  try {
    const report = await validateSnapshot(options.snapshot, source, {
      signal: ports.signal,
      label: options.label,
      onEntry: (entry) => references.add({ name: entry.name, type: entry.type, body: entry }),
    });
    const needs = references.needs();
    let referenceCheck: ValidateResult['referenceCheck'];
    if (client !== undefined) {
      // The environment whose templates were used is the intended target: its references are checked too.
      const held = await fetchTargetReferences(client, ports.signal);
      referenceCheck = {
        problems: checkReferenceNeeds(needs, held),
        warnings: describeReferenceWarnings(needs, held),
      };
    }
    const valid = report.valid && (referenceCheck?.problems.length ?? 0) === 0;
    return { ...report, valid, references: needs, referenceCheck };
  } finally {
    client?.close();
  }
}
