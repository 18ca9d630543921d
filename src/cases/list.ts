/**
 * `cases list`: every matching case, page by page, into a record sink. A few pages are in memory at a
 * time (the one written and those asked for ahead, see `pagesThrough`), so memory does not grow with
 * the number of cases.
 */
import { caseWriteId, listCasePages } from '../api/cases.js';
import type { HttpClient } from '../api/http.js';
import type { FilterClause } from '../api/types.js';
import type { SecurityCase } from '../model/security-case.js';

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

/** What to list. */
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
export async function* listCaseRecordPages(
  client: HttpClient,
  query: CaseListQuery,
): AsyncGenerator<readonly Record<string, unknown>[]> {
  const pages: AsyncIterable<readonly SecurityCase[]> = listCasePages(client, {
    ...(query.filter === undefined ? {} : { filter: query.filter }),
    ...(query.sort === undefined ? {} : { sort: query.sort }),
    ...(query.fields === undefined || query.fields.length === 0 ? {} : { fields: fieldsToAsk(query.fields) }),
    ...(query.pageSize === undefined ? {} : { pageSize: query.pageSize }),
    ...(query.signal === undefined ? {} : { signal: query.signal }),
  });
  const fields = query.fields;
  for await (const page of pages) {
    if (fields !== undefined && fields.length > 0) {
      yield page.map((c) => projectCase(c, fields));
      continue;
    }
    // Each case is a fresh object already (read from its page): completed in place, handed on as is.
    if (query.writeId === true) for (const c of page) (c as Record<string, unknown>).writeId = caseWriteId(c);
    yield page as readonly Record<string, unknown>[];
  }
}

/** Stream every matching case into `sink`; resolves to the number written. The sink is ended on success only. */
export async function writeCases(
  client: HttpClient,
  query: CaseListQuery,
  sink: RecordSink,
): Promise<number> {
  let count = 0;
  for await (const page of listCaseRecordPages(client, query)) {
    for (const record of page) sink.write(record);
    count += page.length;
    await sink.flush();
  }
  await sink.end();
  return count;
}
