/** `dds-migrate diff`: the result is printed only once both sides are read, never half a plan. */
import { renderDiffMarkdown } from '../diff/render-markdown.js';
import { renderDiffText } from '../diff/render-text.js';
import { type DiffResult, hasDifferences, type UncomparableField } from '../diff/types.js';
import { collectIgnoreFields, diffSources } from '../diff-workflow/diff-sources.js';
import { countOf } from '../display-name.js';
import { ExitCode } from '../errors.js';
import type { CommandSpec } from './command.js';
import type { CliContext } from './context.js';
import { resolveSide, runEnvironments, runPorts, withEnvironmentOptions } from './environment.js';
import { writeJsonDocument } from './json-document.js';
import { formatOption, listOption, readPathOption, readStringOption, stringOption } from './options.js';
import { chooseFormat } from './render.js';
import { useSnapshotKeysOf, withSnapshotKeyOptions } from './snapshot-keys.js';

const DIFF_FORMATS = ['text', 'json', 'markdown'] as const;

/** An `uncomparable` item as `JSON.stringify(document, null, 2)` lays it out, in half its time. */
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
    // Both required by yargs; read once each, so that one given twice is refused.
    const sides = { from: readStringOption(args, 'from') ?? '', to: readStringOption(args, 'to') ?? '' };
    await useSnapshotKeysOf(args, ctx, [sides.from, sides.to]);
    const {
      diff: result,
      typeOf,
      from,
      to,
    } = await diffSources(
      {
        ...sides,
        config,
        cwd: ctx.io.cwd,
        ignoreFields,
        schemas,
      },
      {
        resolveEnvironment: (flag) => resolveSide(ctx, args, flag),
        ...runPorts(ctx),
      },
    );
    ctx.out.info(
      `from ${from.label}: ${countOf(from.count, 'connection')}; to ${to.label}: ${countOf(to.count, 'connection')}`,
    );
    printResult(result, format, typeOf, ctx, { from: from.label, to: to.label });
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
