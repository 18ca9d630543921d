/** `dds-migrate overrides init`: prints the skeleton's variable names so a script can check they are set. */
import { resolve } from 'node:path';
import { countOf } from '../display-name.js';
import { ExitCode, UsageError } from '../errors.js';
import { DEFAULT_VARIABLE_PREFIX, initOverrides } from '../overrides/init-overrides.js';
import type { CommandSpec } from './command.js';
import { booleanOption, readStringOption, stringOption } from './options.js';
import { readSnapshotArgument, withSnapshotArgument } from './snapshot-keys.js';

export const overridesInitCommand: CommandSpec = {
  builder: (yargs) =>
    withSnapshotArgument(yargs).options({
      output: stringOption('The overrides file to write (mode 0600; never overwritten without --force)', {
        alias: 'o',
        demandOption: true,
      }),
      prefix: stringOption(
        `Prefix of the variable names (default ${DEFAULT_VARIABLE_PREFIX}: ${DEFAULT_VARIABLE_PREFIX}_<ENTRY>_<FIELD>)`,
      ),
      schemas: stringOption('Folder of <type>.schema.json files (default: the shipped schemas/templates)'),
      force: booleanOption('Replace an existing output file'),
    }),
  examples: [
    {
      command: '$0 overrides init prod.snapshot.jsonl -o secrets.overrides.json',
      describe: 'Write the skeleton, list the variables to set',
    },
    {
      command: '$0 overrides init prod.snapshot.jsonl -o secrets.overrides.json --prefix DR --force',
      describe: 'Again, with variables named DR_<ENTRY>_<FIELD>, replacing the file',
    },
  ],
  async run(args, ctx) {
    const snapshot = await readSnapshotArgument(args, ctx);
    const output = readStringOption(args, 'output', 'a path');
    if (output === undefined) throw new UsageError('Missing -o FILE', { hint: 'See --help' });
    const schemas = readStringOption(args, 'schemas', 'a path');
    const prefix = readStringOption(args, 'prefix');
    const result = await initOverrides({
      snapshot: snapshot.path,
      output: resolve(ctx.io.cwd, output),
      outputLabel: output,
      force: args.force === true,
      signal: ctx.signal,
      ...(prefix === undefined ? {} : { prefix }),
      ...(schemas === undefined ? {} : { schemasDir: resolve(ctx.io.cwd, schemas) }),
    });
    if (ctx.globals.json) {
      ctx.out.json({
        file: result.file,
        entryCount: result.entryCount,
        entriesWithSecrets: result.entriesWithSecrets,
        variables: result.variables,
      });
    } else {
      for (const v of result.variables) ctx.out.result(v.variable);
      const n = result.variables.length;
      ctx.out.info(
        n === 0
          ? `${result.file}: no secret to supply (${result.entryCount} entries checked)`
          : `${result.file}: ${countOf(n, 'variable')} for ${result.entriesWithSecrets} of ${result.entryCount} entries; set them, then: dds-migrate import SNAPSHOT --to E --overrides ${result.file}`,
      );
    }
    return ExitCode.ok;
  },
};
