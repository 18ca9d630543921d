/**
 * `dds-migrate diff --from E|SNAPSHOT --to E|SNAPSHOT`: the options, the call of the diff workflow
 * ({@link diffSources} in src/diff-workflow/diff-sources.ts) and the rendering of its result. Nothing
 * is printed until both sides are read and checked, so a damaged snapshot or an unreachable service
 * never leaves half a plan on stdout.
 *
 * Exit 0: no differences (fields the service masked may remain "not comparable"); 1: differences;
 * 2: bad input; 4/5: the service rejected the token / could not be reached.
 */

import { renderDiffMarkdown } from '../diff/render-markdown.js';
import { renderDiffText } from '../diff/render-text.js';
import { type DiffResult, hasDifferences, type UncomparableField } from '../diff/types.js';
import { collectIgnoreFields, diffSources } from '../diff-workflow/diff-sources.js';
import { countOf } from '../display-name.js';
import { ExitCode } from '../errors.js';
import type { CommandSpec } from './command.js';
import type { CliContext } from './context.js';
import { clientFactory, resolveSide, runEnvironments, withEnvironmentOptions } from './environment.js';
import { writeJsonDocument } from './json-document.js';
import { formatOption, listOption, readPathOption, stringOption } from './options.js';
import { chooseFormat } from './render.js';
import { useSnapshotKeysOf, withSnapshotKeyOptions } from './snapshot-keys.js';

const DIFF_FORMATS = ['text', 'json', 'markdown'] as const;

/**
 * An `uncomparable` item as `JSON.stringify(document, null, 2)` lays it out in its array: the same
 * text in about half the time of that call per item (100 000 items).
 */
export function layOutUncomparable(field: UncomparableField): string {
  return `{\n      "name": ${JSON.stringify(field.name)},\n      "path": ${JSON.stringify(field.path)}\n    }`;
}

function printResult(
  result: DiffResult,
  format: (typeof DIFF_FORMATS)[number],
  typeOf: (name: string) => string | undefined,
  ctx: CliContext,
  labels: { readonly from: string; readonly to: string },
): void {
  if (format === 'json') {
    // The contract's shape: both sides' labels first, then the result. Written a piece at a time: 100 000
    // connections holding a masked value are 10 MB of `uncomparable`, which as one text was in memory
    // whole, scrubbed and encoded (the same time measured, about 10 MB less peak).
    writeJsonDocument(
      ctx.out,
      { from: labels.from, to: labels.to, ...result },
      'uncomparable',
      result.uncomparable,
      layOutUncomparable,
    );
    return;
  }
  if (format === 'markdown') {
    ctx.out.result(renderDiffMarkdown(result, labels, typeOf).trimEnd());
    return;
  }
  const color = ctx.out.stdoutIsTTY && !ctx.io.env.NO_COLOR;
  // Both sides named first: `+` is what `import` would create in --to, `-` what `--prune` would delete,
  // `~` what `--on-conflict update` would update.
  const header = `from ${labels.from} to ${labels.to} (+ only in from, - only in to, ~ changed)`;
  const lines = renderDiffText(result, { color, typeOf });
  ctx.out.result([header, ...lines].join('\n'));
}

export const diffCommand: CommandSpec = {
  builder: (yargs) =>
    withEnvironmentOptions(withSnapshotKeyOptions(yargs), ['from', 'to'], {
      describe: {
        from: 'The side to compare from: a config name, a base URL or a snapshot file',
        to: 'The side to compare to: a config name, a base URL or a snapshot file',
      },
    }).options({
      format: formatOption(
        DIFF_FORMATS,
        'text (a plan: + added, - removed, ~ changed), json, or markdown for a pull request or a ticket (default text; json with --json)',
      ),
      'ignore-field': listOption(
        'Ignore a top-level field name or a JSON pointer (* matches any key or index); repeatable',
      ),
      schemas: stringOption(
        'Template schemas folder whose x-secret fields are masked (default: the shipped schemas/templates)',
      ),
    }),
  examples: [
    {
      command: '$0 diff --from prod --to dr',
      describe: 'What differs between two environments (exit 1 when something differs)',
    },
    {
      command: '$0 diff --from prod.snapshot.jsonl --to dr --format json',
      describe: 'A snapshot against an environment, as JSON',
    },
    {
      command: "$0 diff --from prod --to dr --ignore-field description --ignore-field '/owners_v2/*/origin'",
      describe: 'Ignore a field and the origin of every owner',
    },
  ],
  async run(args, ctx) {
    const format = chooseFormat(args.format, ctx.globals.json, DIFF_FORMATS, 'text');
    const config = await runEnvironments(ctx).config();
    const ignoreFields = collectIgnoreFields(args.ignoreField, config);
    const schemas = readPathOption(args, 'schemas', ctx.io.cwd, 'a folder');
    await useSnapshotKeysOf(args, ctx, [String(args.from ?? ''), String(args.to ?? '')]);
    const {
      diff: result,
      typeOf,
      from: fromSide,
      to: toSide,
    } = await diffSources(
      {
        from: String(args.from ?? ''),
        to: String(args.to ?? ''),
        config,
        cwd: ctx.io.cwd,
        ignoreFields,
        schemas,
      },
      {
        resolveEnvironment: (flag) => resolveSide(ctx, args, flag),
        createClient: clientFactory(ctx),
        signal: ctx.signal,
      },
    );
    ctx.out.info(
      `from ${fromSide.label}: ${countOf(fromSide.count, 'connection')}; to ${toSide.label}: ${countOf(toSide.count, 'connection')}`,
    );
    printResult(result, format, typeOf, ctx, { from: fromSide.label, to: toSide.label });
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
