/**
 * The `cases list` workflow: every matching case, page by page, into a record sink the caller renders,
 * on stdout or into `output`, written atomically (mode 0600: security cases say where sensitive data
 * lives, which is itself sensitive; the file appears only when the whole list was written). A few pages
 * are in memory at a time (the one written and those asked for ahead, see `pagesThrough`), so memory
 * does not grow with the number of cases.
 */
import { caseWriteId, listCasePages } from '../api/cases.js';
import { type EnvironmentPorts, withClient } from '../api/client-factory.js';
import type { HttpClient } from '../api/http.js';
import type { FilterClause } from '../api/types.js';
import { type AtomicTextFile, openAtomicTextFile } from '../files.js';

/**
 * Where records go: the CLI's record writer (table, json, ndjson, csv). `write` is synchronous (it
 * renders into a buffer); `flush` is awaited after each page, so a slow reader or disk bounds memory to
 * about a page.
 */
export interface RecordSink {
  write(record: Record<string, unknown>): void;
  flush(): Promise<void>;
  end(): Promise<void>;
}

export interface CaseListQuery {
  readonly filter?: readonly FilterClause[] | string | undefined;
  /** `field:asc|desc`. */
  readonly sort?: string | undefined;
  /** Fields to ask for and to output, in this order; all fields when absent. */
  readonly fields?: readonly string[] | undefined;
  /**
   * Add `writeId` (the id a write takes, see {@link caseWriteId}) to each whole record (the table and
   * CSV columns show it); a `writeId` named in `fields` is always filled.
   */
  readonly writeId?: boolean | undefined;
  readonly pageSize?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/**
 * Only `fields` of a case, in that order. The service is asked for the same fields, but may add more
 * (`id`, `caseId`): the output holds what the user asked for and nothing else. `writeId` is the id a
 * write takes.
 */
export function projectCase(
  c: Readonly<Record<string, unknown>>,
  fields: readonly string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f] = f === 'writeId' ? caseWriteId(c) : c[f];
  return out;
}

/**
 * The `fields` asked of the service: the user's, without `writeId` (computed here), plus the three ids
 * a case may carry, so that the id a write takes is known whatever the user asked to see.
 */
export function fieldsToAsk(fields: readonly string[]): string {
  const asked = fields.filter((f) => f !== 'writeId');
  for (const id of CASE_ID_FIELDS) if (!asked.includes(id)) asked.push(id);
  return asked.join(',');
}

/** The fields that may identify a case (api-notes [docs]). */
const CASE_ID_FIELDS = ['_id', 'caseId', 'id'] as const;

/**
 * The case listing, a page of output records at a time (projected when `fields` is given). Pages, not
 * records: the work per record is synchronous, and a promise per record would cost more than it.
 */
async function* listCaseRecordPages(
  client: HttpClient,
  query: CaseListQuery,
): AsyncGenerator<readonly Record<string, unknown>[]> {
  const fields = query.fields !== undefined && query.fields.length > 0 ? query.fields : undefined;
  const pages = listCasePages(client, {
    filter: query.filter,
    sort: query.sort,
    fields: fields === undefined ? undefined : fieldsToAsk(fields),
    pageSize: query.pageSize,
    signal: query.signal,
  });
  for await (const page of pages) {
    if (fields !== undefined) {
      yield page.map((c) => projectCase(c, fields));
      continue;
    }
    // Each case is a fresh object already (read from its page): completed in place, handed on as is.
    if (query.writeId === true) for (const c of page) (c as Record<string, unknown>).writeId = caseWriteId(c);
    yield page as readonly Record<string, unknown>[];
  }
}

/**
 * List the cases of `query` into the sink `createSink` makes: into the file `output` (absolute, opened
 * here) or, when undefined, to stdout. Resolves to the environment's label, the number of cases written
 * and the file written; the sink is ended on success only.
 */
export async function listEnvironmentCases(
  options: { readonly query: CaseListQuery; readonly output: string | undefined },
  ports: EnvironmentPorts,
  createSink: (file: AtomicTextFile | undefined) => RecordSink,
): Promise<{ readonly environment: string; readonly count: number; readonly file: string | undefined }> {
  return withClient(ports, async (client, environment) => {
    let file: AtomicTextFile | undefined;
    try {
      if (options.output !== undefined)
        file = await openAtomicTextFile(options.output, {
          hint: 'Check the -o path and that its folder exists',
        });
      const sink = createSink(file);
      let count = 0;
      for await (const page of listCaseRecordPages(client, options.query)) {
        for (const record of page) sink.write(record);
        count += page.length;
        await sink.flush();
        // A slow disk bounds memory.
        if (file?.needsDrain) await file.drain();
      }
      await sink.end();
      await file?.commit();
      return { environment: environment.label, count, file: file?.path };
    } catch (error) {
      await file?.abort();
      throw error;
    }
  });
}
