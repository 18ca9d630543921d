/**
 * Remapping a scan profile's `dataSourceList` from a source environment to a target (pure): what
 * `import` and `profiles clone` both send.
 *
 * The spec says the list holds connection `_id`s; api-notes [code] says BigID's own CI action writes
 * connection **names** (and the tutorial `_id`s), and [seen] that real bodies often list sources by
 * name. A restore keeps each element's form: an id becomes the target's id of the same connection
 * (ids differ between environments; the connection name is the natural key), a name stays a name (of a
 * connection the target has). A list may mix both forms; order is kept.
 */

export type DataSourceForm = 'id' | 'name';

/** What {@link remapDataSourceList} needs to know about the source and the target. */
export interface DataSourceListContext {
  /**
   * For each element (same index), the name of the source connection it refers to, when recorded
   * (a snapshot's `dataSourceNames`); null where unknown.
   */
  readonly recordedNames?: readonly (string | null)[];
  /** The source connection name of a source `_id`, when the source's connections are known. */
  readonly nameOfSourceId?: (id: string) => string | undefined;
  /**
   * The target's name of the connection named `sourceName` in the source (the same name, or a new one
   * when this run renamed it), or undefined when the target has no such connection.
   */
  readonly targetNameOf: (sourceName: string) => string | undefined;
  /** The target's `_id` of a target connection name, when known (else the name is sent). */
  readonly targetIdOf?: (targetName: string) => string | undefined;
}

export interface RemappedDataSource {
  /** As in the source's list. */
  readonly ref: string;
  readonly form: DataSourceForm;
  readonly sourceName: string;
  readonly targetName: string;
  /** What the target's list holds: the target's name for a name, its `_id` (else its name) for an id. */
  readonly to: string;
}

/** An element that cannot be remapped. */
export interface DataSourceProblem {
  readonly index: number;
  readonly ref: string;
  readonly message: string;
  /** The connection it names, when that connection is the problem (missing from the target). */
  readonly causedBy?: string;
}

/** The remapped list, or the elements that could not be remapped (every one of them). */
export type RemappedDataSourceList =
  | { readonly ok: true; readonly elements: readonly RemappedDataSource[] }
  | { readonly ok: false; readonly problems: readonly DataSourceProblem[] };

/**
 * Remap `list` element by element. The source connection of an element is its recorded name, or the
 * name of the source connection whose `_id` it is, or (neither known) the element itself when the
 * target has a connection of that name: the element was a name. An element is a name when it equals
 * its source connection's name; anything else is an id.
 */
export function remapDataSourceList(
  list: readonly string[],
  context: DataSourceListContext,
): RemappedDataSourceList {
  const elements: RemappedDataSource[] = [];
  const problems: DataSourceProblem[] = [];
  list.forEach((ref, index) => {
    const known = context.recordedNames?.[index] ?? context.nameOfSourceId?.(ref) ?? null;
    const sourceName = known ?? (context.targetNameOf(ref) === undefined ? undefined : ref);
    if (sourceName === undefined) {
      problems.push({
        index,
        ref,
        message: `data source ${ref} has no connection name in the snapshot and no connection of that name is in the target`,
      });
      return;
    }
    const targetName = context.targetNameOf(sourceName);
    if (targetName === undefined) {
      problems.push({
        index,
        ref,
        message: `connection '${sourceName}' is neither in the target nor created by this import`,
        causedBy: sourceName,
      });
      return;
    }
    const form: DataSourceForm = ref === sourceName ? 'name' : 'id';
    const to = form === 'name' ? targetName : (context.targetIdOf?.(targetName) ?? targetName);
    elements.push({ ref, form, sourceName, targetName, to });
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, elements };
}
