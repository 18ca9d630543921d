/**
 * `dds-migrate diff --from E|SNAPSHOT --to E|SNAPSHOT`: what differs between two environments or
 * snapshots, before anything is written. Each side is read whole (a live environment through the
 * streamed export, a snapshot through the verifying reader), then the pure core in `src/diff/`
 * compares them. Nothing is printed until both sides are read and checked, so a damaged snapshot or
 * an unreachable service never leaves half a plan on stdout.
 *
 * Exit 0: no differences (fields the service masked may remain "not comparable"); 1: differences;
 * 2: bad input; 4/5: the service rejected the token / could not be reached.
 */
import { statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { exportConnections } from '../api/connections.js';
import type { Config } from '../config.js';
import { diffConnections } from '../diff/compare.js';
import { parseIgnoreRule } from '../diff/ignore.js';
import { renderDiffText } from '../diff/render-text.js';
import { type DiffResult, hasDifferences } from '../diff/types.js';
import { ConfigError, ExitCode, InputFileError, UsageError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import { loadShippedCatalog } from '../schema/catalog.js';
import { readSnapshotEntries } from '../snapshot/read.js';
import type { CommandSpec, ParsedArgs } from './command.js';
import type { CliContext } from './context.js';
import { getConfig, openEnvironment, withEnvironmentOptions } from './environment.js';
import { readStringOption } from './options.js';
import { assertFormatFitsJson } from './render.js';

/** Output formats of `diff`. */
export const DIFF_FORMATS = ['text', 'json'] as const;
/** One output format of `diff`. */
export type DiffFormat = (typeof DIFF_FORMATS)[number];

/** What one side of a diff names. */
export type DiffSide =
  | { readonly kind: 'environment'; readonly ref: string }
  | { readonly kind: 'snapshot'; readonly path: string; readonly ref: string };

const URL_PATTERN = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * Decide whether `--from`/`--to` names an environment or a snapshot file, in this order:
 * a URL is an environment; a name of the config file is an environment (write `./prod` for a file
 * called `prod`); an existing file, or a path ending in `.jsonl`, is a snapshot.
 *
 * @throws InputFileError when a `.jsonl` path does not exist; UsageError when it is none of these.
 */
export function classifySide(ref: string, flag: 'from' | 'to', config: Config, cwd: string): DiffSide {
  if (ref.trim() === '')
    throw new UsageError(`Expected --${flag} to be an environment or a snapshot file, got ''`);
  if (URL_PATTERN.test(ref) || Object.hasOwn(config.environments, ref)) return { kind: 'environment', ref };
  const path = resolve(cwd, ref);
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat?.isDirectory()) {
    throw new UsageError(
      `Expected --${flag} to be a snapshot file or an environment, got the directory '${ref}'`,
      {
        hint: 'Name a *.snapshot.jsonl file inside it',
      },
    );
  }
  if (stat?.isFile()) return { kind: 'snapshot', path, ref };
  if (ref.endsWith('.jsonl')) {
    throw new InputFileError(ref, undefined, 'no such snapshot file', {
      hint: `Check the path given to --${flag} (relative to ${cwd})`,
    });
  }
  const names = Object.keys(config.environments);
  throw new UsageError(
    `Expected --${flag} to be an environment name from the config file, a base URL (https://host[:port]) or a snapshot file, got '${ref}'`,
    {
      hint:
        names.length > 0
          ? `Environments in ${config.path ?? 'the config file'}: ${names.join(', ')}`
          : 'No config file was found; give a base URL or a snapshot file',
    },
  );
}

/**
 * The ignore rules of a run: `diff.ignoreFields` of the config file, then every `--ignore-field`.
 *
 * @throws ConfigError for a bad rule in the config file, UsageError for a bad flag.
 */
export function collectIgnoreFields(flagValue: unknown, config: Config): string[] {
  const fromConfig = config.diff?.ignoreFields ?? [];
  for (const text of fromConfig) {
    const parsed =
      typeof text === 'string' ? parseIgnoreRule(text) : { ok: false as const, problem: 'a string' };
    if (!parsed.ok) {
      throw new ConfigError(`${config.path ?? 'config'}: diff.ignoreFields: expected ${parsed.problem}`, {
        hint: 'Fix the config file',
      });
    }
  }
  const raw = flagValue === undefined ? [] : Array.isArray(flagValue) ? flagValue : [flagValue];
  const fromFlags = raw.map((v) => (typeof v === 'string' ? v : String(v)));
  for (const text of fromFlags) {
    const parsed = parseIgnoreRule(text);
    if (!parsed.ok)
      throw new UsageError(`Expected --ignore-field to be ${parsed.problem}`, { hint: 'See --help' });
  }
  return [...fromConfig, ...fromFlags];
}

function chooseFormat(args: ParsedArgs, ctx: CliContext): DiffFormat {
  const format = args.format;
  assertFormatFitsJson(format, ctx.globals.json);
  if (format === undefined) return ctx.globals.json ? 'json' : 'text';
  if (format === 'text' || format === 'json') return format;
  throw new UsageError(`Expected --format to be text or json, got ${JSON.stringify(format)}`);
}

/** Read one side whole. `signal` stops it when the other side failed or on Ctrl-C. */
async function readSide(
  side: DiffSide,
  flag: 'from' | 'to',
  args: ParsedArgs,
  ctx: CliContext,
  signal: AbortSignal,
): Promise<{ entries: Connection[]; label: string }> {
  const entries: Connection[] = [];
  if (side.kind === 'snapshot') {
    // The reader checks the trailer (entry count, sha256) after the last entry: nothing is compared
    // before the whole file is known to be intact.
    // Messages name the file as it was typed.
    for await (const entry of readSnapshotEntries(side.path, { signal, label: side.ref }))
      entries.push(entry);
    return { entries, label: `${basename(side.path)} (snapshot)` };
  }
  const { environment, client } = await openEnvironment(ctx, args, flag);
  try {
    for await (const entry of exportConnections(client, { signal })) entries.push(entry);
    return { entries, label: `${environment.label} (environment)` };
  } finally {
    client.close();
  }
}

/** Read both sides at once; the first failure stops the other side. */
async function readBothSides(
  sides: { from: DiffSide; to: DiffSide },
  args: ParsedArgs,
  ctx: CliContext,
): Promise<[{ entries: Connection[]; label: string }, { entries: Connection[]; label: string }]> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(ctx.signal.reason);
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const guard = <T>(promise: Promise<T>): Promise<T> =>
    promise.catch((error: unknown) => {
      controller.abort(error);
      throw error;
    });
  try {
    return await Promise.all([
      guard(readSide(sides.from, 'from', args, ctx, controller.signal)),
      guard(readSide(sides.to, 'to', args, ctx, controller.signal)),
    ]);
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

function printResult(
  result: DiffResult,
  format: DiffFormat,
  from: readonly Connection[],
  ctx: CliContext,
): void {
  if (format === 'json') {
    ctx.out.json(result);
    return;
  }
  const added = new Set(result.added);
  const types = new Map<string, string>();
  if (added.size > 0) for (const c of from) if (added.has(c.name)) types.set(c.name, c.type);
  const color = ctx.out.stdoutIsTTY && !ctx.io.env.NO_COLOR;
  ctx.out.result(renderDiffText(result, { color, typeOf: (name) => types.get(name) }).join('\n'));
}

/** `diff`. */
export const diffCommand: CommandSpec = {
  command: 'diff',
  describe: 'Show what differs between two environments or snapshots',
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['from', 'to'])
      .option('from', {
        type: 'string',
        demandOption: true,
        requiresArg: true,
        describe: 'The side to compare from: a config name, a base URL or a snapshot file',
      })
      .option('to', {
        type: 'string',
        demandOption: true,
        requiresArg: true,
        describe: 'The side to compare to: a config name, a base URL or a snapshot file',
      })
      .option('format', {
        type: 'string',
        choices: DIFF_FORMATS,
        describe: 'text (a plan: + added, - removed, ~ changed) or json (default text; json with --json)',
      })
      .option('ignore-field', {
        type: 'string',
        array: true,
        requiresArg: true,
        describe: 'Ignore a top-level field name or a JSON pointer (* matches any key or index); repeatable',
      })
      .option('schemas', {
        type: 'string',
        requiresArg: true,
        describe:
          'Template schemas folder whose x-secret fields are masked (default: the shipped schemas/templates)',
      })
      .example('$0 diff --from prod --to dr', 'What differs between two environments')
      .example(
        '$0 diff --from prod-2026-11-22.snapshot.jsonl --to dr --format json',
        'A snapshot against an environment, as JSON (exit 1 when something differs)',
      )
      .example(
        '$0 diff --from prod --to dr --ignore-field description --ignore-field /owners_v2/*/origin',
        'Ignore a field and the origin of every owner',
      ),
  async run(args, ctx) {
    const format = chooseFormat(args, ctx);
    const config = await getConfig(ctx);
    const ignoreFields = collectIgnoreFields(args.ignoreField, config);
    const from = classifySide(String(args.from ?? ''), 'from', config, ctx.io.cwd);
    const to = classifySide(String(args.to ?? ''), 'to', config, ctx.io.cwd);
    const schemas = readStringOption(args, 'schemas', 'schemas', 'a folder');
    const catalog = await loadShippedCatalog(
      schemas === undefined ? undefined : resolve(ctx.io.cwd, schemas),
    );

    const [fromSide, toSide] = await readBothSides({ from, to }, args, ctx);
    ctx.out.info(
      `from ${fromSide.label}: ${fromSide.entries.length} connections; to ${toSide.label}: ${toSide.entries.length} connections`,
    );
    const result = diffConnections(fromSide.entries, toSide.entries, {
      ignoreFields,
      secretFields: (type) => catalog.secretFields(type),
    });
    printResult(result, format, fromSide.entries, ctx);
    ctx.log.info(
      {
        added: result.added.length,
        removed: result.removed.length,
        changed: result.changed.length,
        unchanged: result.unchanged,
        uncomparable: result.uncomparable.length,
      },
      'diff done',
    );
    return hasDifferences(result) ? ExitCode.partial : ExitCode.ok;
  },
};
