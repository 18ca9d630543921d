/**
 * `dds-migrate export --from E [--ids ID,..] [--type T,..] [--name GLOB] (-o FILE | --out-dir DIR)`:
 * pulls connections through the file-download export and writes a snapshot (contract section 3).
 *
 * Selection: with neither `--type` nor `--name` the export is asked for all connections, or for the
 * `--ids`. With `--type` or `--name` the list endpoint (filtered by type on the service) finds the ids
 * whose names match the glob (and that are among `--ids`, when given); the export is then asked for
 * those ids, in batches of {@link EXPORT_ID_BATCH} so that no URL grows with the environment. Entries the
 * service sends beyond what was asked for are dropped. A selection that matches nothing writes an
 * empty snapshot, with a warning.
 *
 * Output: the snapshot's path on stdout (so `f=$(dds-migrate export ...)` works); the summary on
 * stderr; with `--json`, one JSON result on stdout instead.
 */
import { resolve } from 'node:path';
import picomatch from 'picomatch';
import { exportConnections, listConnections } from '../api/connections.js';
import type { HttpClient } from '../api/http.js';
import type { FilterClause } from '../api/types.js';
import { compareNames } from '../connections/match.js';
import { ExitCode, UsageError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import { findMaskedPaths } from '../schema/catalog.js';
import { createSnapshotHeader, type SnapshotSelection } from '../snapshot/format.js';
import { prepareSnapshotTarget, type SnapshotTarget, writeSnapshot } from '../snapshot/write.js';
import { TOOL_NAME, TOOL_VERSION } from '../version.js';
import type { CommandSpec, ParsedArgs } from './command.js';
import type { CliContext } from './context.js';
import { openEnvironment, withEnvironmentOptions } from './environment.js';
import { parseListOption, readStringOption } from './options.js';

/** Ids per export request when exporting a selection. */
export const EXPORT_ID_BATCH = 200;

/** What the command was asked for, checked. */
export interface ExportRequest {
  readonly ids: readonly string[] | undefined;
  readonly types: readonly string[] | undefined;
  readonly nameGlob: string | undefined;
  readonly output: { readonly file: string } | { readonly outDir: string };
}

/** Check the options once, before anything is sent. */
export function readExportRequest(args: ParsedArgs): ExportRequest {
  const ids = parseListOption(args.ids, '--ids');
  const types = parseListOption(args.type, '--type');
  const nameGlob = readStringOption(args, 'name', 'name', "a glob such as 'finance-*'");
  const file = args.o ?? args.output;
  const outDir = args.outDir;
  for (const [flag, value] of [
    ['-o', file],
    ['--out-dir', outDir],
  ] as const) {
    if (value !== undefined && (typeof value !== 'string' || value.trim() === '')) {
      throw new UsageError(`Expected ${flag} to be a path, got ${JSON.stringify(value)}`);
    }
  }
  if ((file === undefined) === (outDir === undefined)) {
    throw new UsageError('Expected exactly one of -o FILE or --out-dir DIR', { hint: 'See --help' });
  }
  return {
    ids,
    types,
    nameGlob,
    output: typeof file === 'string' ? { file } : { outDir: outDir as string },
  };
}

/** Counts the summary reports, gathered while the snapshot is written. */
export interface ExportSummary {
  readonly path: string;
  readonly entryCount: number;
  readonly sha256: string;
  readonly types: Record<string, number>;
  /** Entries holding at least one masked secret, and how often each field is masked. */
  readonly maskedSecrets: { readonly entries: number; readonly fields: Record<string, number> };
}

/** `export`. */
export const exportCommand: CommandSpec = {
  command: 'export',
  describe: "Write a snapshot of an environment's connections",
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['from'])
      .option('ids', {
        type: 'string',
        requiresArg: true,
        describe: 'Only these connection ids (comma-separated)',
      })
      .option('type', {
        type: 'string',
        requiresArg: true,
        describe: 'Only these types (comma-separated), e.g. s3,snowflake',
      })
      .option('name', {
        type: 'string',
        requiresArg: true,
        describe: "Only names matching this glob, e.g. 'finance-*'",
      })
      .option('o', {
        alias: 'output',
        type: 'string',
        requiresArg: true,
        describe: 'Write the snapshot to FILE (replaced atomically if it exists)',
      })
      .option('out-dir', {
        type: 'string',
        requiresArg: true,
        describe: 'Write DIR/<environment>/<UTC timestamp>.snapshot.jsonl (never overwrites)',
      })
      .conflicts('o', 'out-dir')
      .example('$0 export --from prod -o prod.snapshot.jsonl', 'Every connection of prod')
      .example(
        '$0 export --from prod --type s3,snowflake --out-dir backups',
        'Only s3 and snowflake, timestamped',
      )
      .example(
        "$0 export --from prod --name 'finance-*' -o finance.snapshot.jsonl",
        'Only names matching a glob',
      ),
  async run(args, ctx) {
    const request = readExportRequest(args);
    const { environment, client } = await openEnvironment(ctx, args, 'from');
    try {
      const envName = environment.name ?? environment.label;
      const target: SnapshotTarget =
        'file' in request.output
          ? { path: resolve(ctx.io.cwd, request.output.file) }
          : { outDir: resolve(ctx.io.cwd, request.output.outDir), environment: envName };
      // Fail on a bad -o / --out-dir before anything is fetched.
      await prepareSnapshotTarget(target);
      const selection: SnapshotSelection = {
        ids: request.ids ?? null,
        types: request.types ?? null,
        name: request.nameGlob ?? null,
      };
      const header = createSnapshotHeader({
        tool: `${TOOL_NAME} ${TOOL_VERSION}`,
        source: { url: environment.url, environment: envName },
        selection,
      });
      const types: Record<string, number> = {};
      const maskedFields: Record<string, number> = {};
      let maskedEntries = 0;
      const onEntry = (entry: Connection) => {
        types[entry.type] = (types[entry.type] ?? 0) + 1;
        const masked = findMaskedPaths(entry);
        if (masked.length > 0) maskedEntries += 1;
        for (const path of masked) {
          const field = path.slice(1).replace(/\/\d+\//g, '/*/');
          maskedFields[field] = (maskedFields[field] ?? 0) + 1;
        }
      };
      const entries = selectEntries(client, request, ctx);
      const written = await writeSnapshot(target, header, entries, { signal: ctx.signal, onEntry });
      const summary: ExportSummary = {
        path: written.path,
        entryCount: written.entryCount,
        sha256: written.sha256,
        types: sortRecord(types),
        maskedSecrets: { entries: maskedEntries, fields: sortRecord(maskedFields) },
      };
      if (summary.entryCount === 0) {
        ctx.out.warn(
          request.ids || request.types || request.nameGlob
            ? 'the selection matched no connection: the snapshot is empty'
            : `${environment.label} has no connections: the snapshot is empty`,
        );
      }
      printSummary(summary, environment.label, ctx);
      return ExitCode.ok;
    } finally {
      client.close();
    }
  },
};

/** The entries to write: the whole export, the `--ids`, or the ids the list finds for `--type`/`--name`. */
async function* selectEntries(
  client: HttpClient,
  request: ExportRequest,
  ctx: CliContext,
): AsyncGenerator<Connection> {
  const signal = ctx.signal;
  if (request.types === undefined && request.nameGlob === undefined) {
    if (request.ids === undefined) {
      yield* exportConnections(client, { signal });
      return;
    }
    yield* exportByIds(client, request.ids, signal, ctx);
    return;
  }
  const matchName = request.nameGlob === undefined ? () => true : picomatch(request.nameGlob, { dot: true });
  const wanted = request.ids === undefined ? undefined : new Set(request.ids);
  const filter: FilterClause[] =
    request.types === undefined ? [] : [{ field: 'type', value: request.types, operator: 'in' }];
  const ids: string[] = [];
  for await (const c of listConnections(client, { ...(filter.length > 0 ? { filter } : {}), signal })) {
    // The service's filter is trusted only as far as it goes: the type and the name are checked here too.
    if (request.types !== undefined && !request.types.includes(c.type)) continue;
    if (typeof c.name !== 'string' || !matchName(c.name)) continue;
    if (typeof c._id !== 'string') {
      ctx.out.warn(
        `connection ${c.name} has no _id in the list: it cannot be exported by id and is left out`,
      );
      continue;
    }
    if (wanted !== undefined && !wanted.has(c._id)) continue;
    ids.push(c._id);
  }
  if (ids.length === 0) return;
  yield* exportByIds(client, ids, signal, ctx);
}

/** Export `ids` in batches; keep only what was asked for; warn about ids the export did not return. */
async function* exportByIds(
  client: HttpClient,
  ids: readonly string[],
  signal: AbortSignal,
  ctx: CliContext,
): AsyncGenerator<Connection> {
  const missing: string[] = [];
  for (let i = 0; i < ids.length; i += EXPORT_ID_BATCH) {
    const batch = ids.slice(i, i + EXPORT_ID_BATCH);
    const pending = new Set(batch);
    for await (const entry of exportConnections(client, { ids: batch, signal })) {
      // A service that ignores `ids` would send everything: keep what this batch asked for, once.
      if (typeof entry._id !== 'string' || !pending.delete(entry._id)) continue;
      yield entry;
    }
    missing.push(...pending);
  }
  if (missing.length > 0) {
    const shown = missing.slice(0, 10).join(', ');
    ctx.out.warn(
      `${missing.length} selected ${missing.length === 1 ? 'id was' : 'ids were'} not in the export (unknown or deleted meanwhile): ${shown}${missing.length > 10 ? ', ...' : ''}`,
    );
  }
}

function sortRecord(record: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(record).sort((a, b) => compareNames(a[0], b[0])));
}

function printSummary(summary: ExportSummary, label: string, ctx: CliContext): void {
  if (ctx.globals.json) {
    ctx.out.json(summary);
    return;
  }
  ctx.out.result(summary.path);
  const n = summary.entryCount;
  const byType = Object.entries(summary.types)
    .map(([type, count]) => `${type}: ${count}`)
    .join(', ');
  ctx.out.info(
    `Wrote ${n} ${n === 1 ? 'connection' : 'connections'} of ${label} to ${summary.path}${byType ? ` (${byType})` : ''}`,
  );
  const masked = summary.maskedSecrets;
  if (masked.entries > 0) {
    const fields = Object.entries(masked.fields)
      .sort((a, b) => b[1] - a[1])
      .map(([field, count]) => `${field}: ${count}`)
      .join(', ');
    ctx.out.info(
      `${masked.entries} ${masked.entries === 1 ? 'connection carries' : 'connections carry'} masked secrets that an import will need supplied (${fields}); see --overrides`,
    );
  }
}
