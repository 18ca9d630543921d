// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
/** Import pre-flight checks (pure): any problem stops the run before any write, listing all (exit 3). */
import type { ResolvedEnvironment } from '../config.js';
import { formatPointer } from '../diff/pointer.js';
import type { Problem } from '../errors.js';
import type { ProblemCode } from '../model/problem.js';
import { isRecord } from '../own-property.js';
import { checkWriteConfirmed } from '../protected.js';
import { isMasked } from '../secrets.js';
import { normaliseTargetUrl } from '../sync/journal/writer.js';
import type { SyncKind } from '../sync/kind.js';
import type { PreparedEntry } from '../sync/kinds/connection/kind.js';
import { describeUnresolved, UNRESOLVED_PLACEHOLDER } from './overrides.js';

/** A problem with an optional classification (the catalog marks masked secrets `masked-secret`). */
export type ClassifiedProblem = Problem & { readonly kind?: string };

/** What the pre-flight needs of the template catalog. */
export interface EntryTemplates {
  checkEntry(entry: Readonly<Record<string, unknown>>): {
    readonly errors: readonly ClassifiedProblem[];
    readonly warnings: readonly ClassifiedProblem[];
  };
  /** Credential fields the template requires. */
  requiredSecretFields(type: string): Iterable<string>;
}

/** Call `visit` with every string value under `value` and the path of segments to it. */
function forEachString(
  value: unknown,
  path: readonly (string | number)[],
  visit: (text: string, path: readonly (string | number)[]) => void,
): void {
  if (typeof value === 'string') visit(value, path);
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) forEachString(v, [...path, i], visit);
  else if (isRecord(value)) for (const [k, v] of Object.entries(value)) forEachString(v, [...path, k], visit);
}

/** Problems that stop one entry from being sent (one per field, the most specific first), and warnings. */
export function checkEntryForSend(
  entry: PreparedEntry,
  templates: EntryTemplates,
): { problems: Problem[]; warnings: Problem[] } {
  const found: Problem[] = [];
  const at = (path: string, message: string, code?: ProblemCode): Problem => ({
    entry: entry.name,
    type: entry.type,
    path,
    message,
    ...(code === undefined ? {} : { code }),
  });

  forEachString(entry.body, [], (value, path) => {
    if (isMasked(value)) {
      found.push(at(formatPointer(path), 'secret is masked ("******")', 'secret-masked'));
    } else if (value.includes('${')) {
      const m = UNRESOLVED_PLACEHOLDER.exec(value);
      if (m) {
        // Not quoted: a placeholder on a credential field is a registered secret, printed as "******".
        found.push(at(formatPointer(path), `unresolved placeholder: ${describeUnresolved(m[0])}`));
      }
    }
  });
  for (const field of templates.requiredSecretFields(entry.type)) {
    const value = entry.body[field];
    if (value === undefined || value === null || value === '') {
      found.push(at(formatPointer([field]), 'required secret is empty', 'secret-empty'));
    }
  }
  const checked = templates.checkEntry(entry.body);
  const masked = checked.warnings.filter((w) => w.kind === 'masked-secret');
  for (const { kind: _kind, ...p } of [...checked.errors, ...masked])
    found.push({ ...p, entry: entry.name, type: entry.type });
  const warnings = checked.warnings
    .filter((w) => w.kind !== 'masked-secret')
    .map((w) => ({ ...w, entry: entry.name, type: entry.type }));
  const byPath = new Map<string, Problem>();
  for (const p of found) if (!byPath.has(p.path ?? '')) byPath.set(p.path ?? '', p);
  return { problems: [...byPath.values()], warnings };
}

/** Run-wide facts the pre-flight checks. */
export interface PreflightFacts {
  readonly maxChanges: number | undefined;
  readonly target: Pick<ResolvedEnvironment, 'label' | 'name' | 'url' | 'protected'>;
  readonly confirm: string | undefined;
  /** `source.url` of the snapshot header. */
  readonly snapshotSourceUrl: string | undefined;
  readonly allowSameSource: boolean;
  /** A dry run writes nothing: the protected-target check is skipped. */
  readonly dryRun: boolean;
}

/** Every pre-flight problem of an import (empty = go): the run-wide ones after the first kind's. */
export function checkPreflight(
  kinds: readonly (readonly [SyncKind, unknown])[],
  facts: PreflightFacts,
): Problem[] {
  let changes = 0;
  const own = kinds.map(([kind, plan]) => {
    const problems = kind.preflight(plan, facts.maxChanges, changes);
    changes += kind.changes(plan);
    return problems;
  });
  const runWide: Problem[] = [];
  if (!facts.dryRun && changes > 0) {
    const refusal = checkWriteConfirmed(facts.target, facts.confirm, '--to');
    if (refusal) {
      const hint = refusal.hint.charAt(0).toLowerCase() + refusal.hint.slice(1);
      runWide.push({ message: `${refusal.reason}; ${hint}` });
    }
  }
  if (
    facts.snapshotSourceUrl !== undefined &&
    !facts.allowSameSource &&
    normaliseTargetUrl(facts.snapshotSourceUrl) === normaliseTargetUrl(facts.target.url)
  ) {
    runWide.push({
      message: `the snapshot was exported from ${facts.target.label} (${facts.target.url}), the target of this import; pass --allow-same-source if that is intended`,
    });
  }
  return [...(own[0] ?? []), ...runWide, ...own.slice(1).flat()];
}

/** One line per problem, for the PreflightError's list. */
export function formatProblem(p: Problem): string {
  const where = [p.entry, p.path].filter((x) => x !== undefined && x !== '').join(' ');
  return where ? `${where}: ${p.message}` : p.message;
}

/** A template warning as one line: one of a whole type (no path) names the type. */
export function formatWarning(w: Problem): string {
  return w.type && !w.path ? `${w.type}: ${w.message}` : formatProblem(w);
}

/** The next step for a refused pre-flight: the overrides advice only when an entry's field is at fault. */
export function preflightHint(
  problems: readonly Problem[],
  referencePointers: ReadonlySet<string>,
  snapshot: string,
): string {
  const references = problems.some((p) => p.path !== undefined && referencePointers.has(p.path));
  // Secrets to supply: end on the command that writes an overrides file for them.
  const secrets = problems.filter((p) => p.code !== undefined).length;
  if (secrets > 0) {
    const quoted = /^[\w@%+=:,./-]+$/.test(snapshot) ? snapshot : `'${snapshot.replaceAll("'", "'\\''")}'`;
    return `${
      references
        ? 'Create the missing scanner groups or stored credentials in the target (or set others with --overrides); '
        : ''
    }${secrets === 1 ? 'one is a secret' : `${secrets} are secrets`} to supply with --overrides; a file of variables for every one: dds-migrate overrides init ${quoted} -o overrides.json`;
  }
  if (references) {
    return 'Create the missing scanner groups or stored credentials in the target, or set others with --overrides (e.g. {"all": {"scanner_group": "..."}}), and re-run (--dry-run shows the plan)';
  }
  const fieldProblems = problems.some((p) => p.path !== undefined);
  return fieldProblems
    ? 'Fix the problems listed above and re-run (masked, empty or missing values: supply them with --overrides, e.g. "${env:VAR}"; --dry-run shows the plan)'
    : 'Fix the problems listed above and re-run (--dry-run shows the plan)';
}
