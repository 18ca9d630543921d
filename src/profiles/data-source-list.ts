/**
 * A scan profile's `dataSourceList` remapped to a target, for `import` and `profiles clone`. The spec says
 * `_id`s; api-notes [code]: BigID's CI action writes names, [seen]: real bodies often list names. So each
 * element keeps its form (an id becomes the target's id of the same-named connection); a list may mix both.
 */

export type DataSourceForm = 'id' | 'name';

/** What {@link remapDataSourceList} knows of the source and the target. */
export interface DataSourceListContext {
  /** A snapshot's `dataSourceNames`: each element's source connection name, null where unknown. */
  readonly recordedNames?: readonly (string | null)[];
  readonly nameOfSourceId?: (id: string) => string | undefined;
  /** The target's name of a source connection (renamed by this run, or the same); undefined if absent. */
  readonly targetNameOf: (sourceName: string) => string | undefined;
  /** A target name's `_id`; when unknown the name is sent. */
  readonly targetIdOf?: (targetName: string) => string | undefined;
}

export interface RemappedDataSource {
  readonly ref: string;
  readonly form: DataSourceForm;
  readonly sourceName: string;
  readonly targetName: string;
  /** What the target's list holds. */
  readonly to: string;
}

export interface DataSourceProblem {
  readonly index: number;
  readonly ref: string;
  readonly message: string;
  /** The connection it names, when that connection is missing from the target. */
  readonly causedBy?: string;
}

/** The remapped list, or every element that could not be remapped. */
export type RemappedDataSourceList =
  | { readonly ok: true; readonly elements: readonly RemappedDataSource[] }
  | { readonly ok: false; readonly problems: readonly DataSourceProblem[] };

/**
 * An element's source connection is its recorded name, else the source connection whose `_id` it is,
 * else itself when the target has a connection of that name. It is a name when it equals that name.
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
