/**
 * The references step of the import (the checks themselves are pure, in src/connections/references.ts;
 * the look-up of the target in src/validate/target-references.ts): the warnings of the entries a run
 * would send.
 */
import {
  describeReferenceWarnings,
  describeSourceIdDrops,
  type ReferenceNeeds,
  type SourceIdChange,
  type TargetReferences,
} from '../connections/references.js';

/**
 * The warnings of the entries a run sends (`needs`: their references, collected as they were checked;
 * `names`: theirs): kinds the target could not list, certificates (never checkable), and
 * source-environment ids dropped.
 */
export function describeImportReferenceWarnings(
  needs: ReferenceNeeds,
  names: ReadonlySet<string>,
  target: TargetReferences,
  sourceIdChanges: ReadonlyMap<string, readonly SourceIdChange[]>,
): string[] {
  const drops = new Map([...sourceIdChanges].filter(([name]) => names.has(name)));
  return [...describeReferenceWarnings(needs, target), ...describeSourceIdDrops(drops)];
}
