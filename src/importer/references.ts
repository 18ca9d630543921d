/**
 * The references step of the import (the checks themselves are pure, in src/connections/references.ts;
 * the look-up of the target in src/validate/target-references.ts): the warnings of the entries a run
 * would send.
 */
import {
  describeReferenceWarnings,
  describeSourceIdDrops,
  type ReferencingEntry,
  type SourceIdChange,
  summarizeReferences,
  type TargetReferences,
} from '../connections/references.js';

/**
 * The warnings of the entries a run sends: kinds the target could not list, certificates (never
 * checkable), and source-environment ids dropped.
 */
export function describeImportReferenceWarnings(
  sent: readonly ReferencingEntry[],
  target: TargetReferences,
  sourceIdChanges: ReadonlyMap<string, readonly SourceIdChange[]>,
): string[] {
  const names = new Set(sent.map((e) => e.name));
  const drops = new Map([...sourceIdChanges].filter(([name]) => names.has(name)));
  return [...describeReferenceWarnings(summarizeReferences(sent), target), ...describeSourceIdDrops(drops)];
}
