/**
 * The `cases list` workflow: every matching case, page by page, into a record sink, on stdout or into
 * `output` (atomic, 0600: where sensitive data lives is itself sensitive). Memory holds a few pages.
 */
import { caseWriteId, listCasePages } from '../api/cases.js';
import { type EnvironmentPorts, withClient } from '../api/client-factory.js';
import type { HttpClient } from '../api/http.js';
import type { FilterClause } from '../api/types.js';
import { type AtomicTextFile, openAtomicTextFile } from '../files.js';
import { isRecord } from '../own-property.js';

/** The CLI's record writer; `flush`, awaited per page to bound memory, resolves false once the reader left. */
export interface RecordSink {
  write(record: Record<string, unknown>): void;
  flush(): Promise<boolean>;
  end(): Promise<void>;
}

export interface CaseListQuery {
  readonly filter?: readonly FilterClause[] | string | undefined;
  /** `field:asc|desc`. */
  readonly sort?: string | undefined;
  /** Fields to ask for and to output, in this order; all fields when absent. */
  readonly fields?: readonly string[] | undefined;
  /** Add `writeId` ({@link caseWriteId}) to each whole record; one named in `fields` is always filled. */
  readonly writeId?: boolean | undefined;
  readonly pageSize?: number | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** Only `fields` of a case, in that order: the service may add more (`id`, `caseId`). */
function projectCase(
  c: Readonly<Record<string, unknown>>,
  fields: readonly string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) out[f] = f === 'writeId' ? caseWriteId(c) : fieldOf(c, f);
  return out;
}

/** A field of a case; a dotted one (`ticketMetadata.ticketUrl`) read nested unless a flat key has the name. */
function fieldOf(c: Readonly<Record<string, unknown>>, field: string): unknown {
  if (Object.hasOwn(c, field) || !field.includes('.')) return c[field];
  let value: unknown = c;
  for (const key of field.split('.')) {
    if (!isRecord(value) || !Object.hasOwn(value, key)) return undefined;
    value = value[key];
  }
  return value;
}

/** The user's `fields` without `writeId` (computed), plus the ids a case may carry (api-notes [docs]). */
function fieldsToAsk(fields: readonly string[]): string {
  const asked = fields.filter((f) => f !== 'writeId');
  for (const id of ['_id', 'caseId', 'id']) if (!asked.includes(id)) asked.push(id);
  return asked.join(',');
}

/** The case listing, a page of output records at a time (see `pagesThrough` for why pages). */
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
    // A fresh object from its page: completed in place.
    if (query.writeId === true) for (const c of page) (c as Record<string, unknown>).writeId = caseWriteId(c);
    yield page as readonly Record<string, unknown>[];
  }
}

/** List the cases of `query` into the file `output` (absolute) or stdout; the sink ends on success only. */
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
        if (!(await sink.flush())) break;
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
