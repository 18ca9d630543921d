/**
 * The `cases list` workflow: every matching case, page by page, streamed to a sink the caller renders,
 * on stdout or into `output`, written atomically (mode 0600: security cases say where sensitive data
 * lives, which is itself sensitive; the file appears only when the whole list was written).
 */
import type { ClientFactory, EnvironmentResolver } from '../api/client-factory.js';
import { type AtomicTextFile, openAtomicTextFile } from '../files.js';
import { type CaseListQuery, type RecordSink, writeCases } from './list.js';

/** What {@link listEnvironmentCases} lists and where; `output` is absolute, undefined for the caller's stdout. */
export interface ListCasesOptions {
  readonly query: CaseListQuery;
  readonly output: string | undefined;
}

/** The outside world of {@link listEnvironmentCases}. */
export interface ListCasesPorts {
  readonly resolveEnvironment: EnvironmentResolver;
  readonly createClient: ClientFactory;
}

/** Renders the records: into `file` (opened by the workflow) or, when undefined, to stdout. */
export type CaseSinkFactory = (file: AtomicTextFile | undefined) => RecordSink;

/** What a listing did. */
export interface ListCasesResult {
  readonly environment: string;
  readonly count: number;
  /** The file written, when `output` was given. */
  readonly file: string | undefined;
}

/** List the cases of `options.query` into the sink `createSink` makes. */
export async function listEnvironmentCases(
  options: ListCasesOptions,
  ports: ListCasesPorts,
  createSink: CaseSinkFactory,
): Promise<ListCasesResult> {
  const environment = await ports.resolveEnvironment();
  const client = ports.createClient(environment);
  let file: AtomicTextFile | undefined;
  try {
    if (options.output !== undefined)
      file = await openAtomicTextFile(options.output, {
        hint: 'Check the -o path and that its folder exists',
      });
    const sink = createSink(file);
    const opened = file;
    const bounded: RecordSink =
      opened === undefined
        ? sink
        : {
            write: (record) => sink.write(record),
            async flush() {
              await sink.flush();
              // A slow disk bounds memory.
              if (opened.needsDrain) await opened.drain();
            },
            end: () => sink.end(),
          };
    const count = await writeCases(client, options.query, bounded);
    await file?.commit();
    return { environment: environment.label, count, file: file?.path };
  } catch (error) {
    await file?.abort();
    throw error;
  } finally {
    client.close();
  }
}
