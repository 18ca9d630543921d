/** What `import --only` and `--type` select; the rules: docs/import.md, "Restore a part". */
import picomatch from 'picomatch';
import { displayName } from '../display-name.js';
import { UsageError } from '../errors.js';

/** A selection, as the plans ask it: `type` given for a connection, absent for a scan profile. */
export interface NameSelection {
  has(name: string, type?: string): boolean;
}

/** `--only` items and `--type` types, either may be absent. */
export class ImportSelection implements NameSelection {
  private readonly matchers: readonly ((name: string) => boolean)[];

  constructor(
    /** `--only` items as typed (names or globs); undefined: every name. */
    readonly items: readonly string[] | undefined,
    /** undefined: every type. */
    readonly types: ReadonlySet<string> | undefined,
  ) {
    this.matchers = (items ?? []).map((item) => {
      const glob = picomatch.scan(item).isGlob ? picomatch(item, { dot: true }) : undefined;
      return (name: string) => name === item || (glob?.(name) ?? false);
    });
  }

  /** True when the item matches `name` (the item itself, or as a glob). */
  matches(item: string, name: string): boolean {
    const i = this.items?.indexOf(item) ?? -1;
    return i >= 0 && (this.matchers[i]?.(name) ?? false);
  }

  has(name: string, type?: string): boolean {
    const named = this.items === undefined || this.matchers.some((m) => m(name));
    if (type === undefined) return named && (this.items !== undefined || this.types === undefined);
    return named && (this.types === undefined || this.types.has(type));
  }
}

/** Check that each `--only` item matches a name of the snapshot (with `--prune`, the target's too). */
export function checkOnly(
  only: ImportSelection | undefined,
  entries: readonly { readonly name: string }[],
  profileNames: readonly string[] = [],
): void {
  if (only?.items === undefined) return;
  const names = [...new Set([...entries.map((e) => e.name), ...profileNames])];
  const unknown = only.items.filter((item) => !names.some((name) => only.matches(item, name)));
  if (unknown.length > 0) {
    throw new UsageError(
      `--only names connections that are not in the snapshot: ${unknown.map(displayName).join(', ')}`,
      { hint: 'Check the names (they are case-sensitive; a glob such as finance-* must match one)' },
    );
  }
}

/** The connections a snapshot's selection (`export --type`, `--name`) covers; undefined: all. */
export function snapshotScope(selection: {
  readonly types: readonly string[] | null;
  readonly name: string | null;
}): NameSelection | undefined {
  const { types, name } = selection;
  if (types === null && name === null) return undefined;
  const matchName = name === null ? () => true : picomatch(name, { dot: true });
  return {
    // A connection of unknown type is not known to be in a type selection: not pruned.
    has: (n, type) => matchName(n) && (types === null || (type !== undefined && types.includes(type))),
  };
}

/** Both selections (either may be absent: every name). */
export function bothSelections(
  a: NameSelection | undefined,
  b: NameSelection | undefined,
): NameSelection | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return { has: (name, type) => a.has(name, type) && b.has(name, type) };
}
