/** Validate a snapshot, streaming: the reader refuses a damaged file, the catalog checks each entry. */
import type { Connection } from '../model/connection.js';
import { scanSnapshot, type VerifiedSnapshot, verifySnapshot } from '../snapshot/read.js';
import type { TemplateCatalog, ValidationProblem } from './catalog.js';

export interface ValidationReport {
  readonly snapshot: {
    readonly path: string;
    readonly entryCount: number;
    readonly sha256: string;
    readonly formatVersion: number;
  };
  /** True when no entry is invalid (warnings allowed). */
  readonly valid: boolean;
  readonly entryCount: number;
  readonly invalidCount: number;
  /** In entry (name) order, as are the warnings. */
  readonly errors: readonly ValidationProblem[];
  readonly warnings: readonly ValidationProblem[];
  readonly catalogWarnings: readonly string[];
}

/** Where schemas come from: a ready catalog, or one built once the snapshot's types are known. */
export type CatalogSource = TemplateCatalog | ((types: readonly string[]) => Promise<TemplateCatalog>);

/**
 * Validate `path`. With a ready catalog the file is read once; with a catalog built from the types
 * (`--templates-from`) it is verified first, then read again with a check that it did not change.
 */
export async function validateSnapshot(
  path: string,
  source: CatalogSource,
  options: {
    readonly signal?: AbortSignal;
    readonly label?: string;
    readonly onEntry?: (entry: Connection) => void;
  } = {},
): Promise<ValidationReport> {
  const errors: ValidationProblem[] = [];
  const warnings: ValidationProblem[] = [];
  let invalidCount = 0;
  let catalog: TemplateCatalog;

  const check = (entry: Connection) => {
    options.onEntry?.(entry);
    const report = catalog.checkEntry(entry);
    if (report.errors.length > 0) {
      invalidCount += 1;
      errors.push(...report.errors);
    }
    if (report.warnings.length > 0) warnings.push(...report.warnings);
  };

  let expected: VerifiedSnapshot | undefined;
  if (typeof source === 'function') {
    expected = await verifySnapshot(path, options);
    catalog = await source([...expected.typeCounts.keys()]);
  } else catalog = source;
  // Problems count only once the whole file checked out; a second read must be the file verified first.
  const verified = await scanSnapshot(path, check, { ...options, ...(expected ? { expected } : {}) });

  return {
    snapshot: {
      path: verified.path,
      entryCount: verified.entryCount,
      sha256: verified.sha256,
      formatVersion: verified.storedFormatVersion,
    },
    valid: invalidCount === 0,
    entryCount: verified.entryCount,
    invalidCount,
    errors,
    warnings,
    catalogWarnings: catalog.warnings,
  };
}
