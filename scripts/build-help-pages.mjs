// The build's step after tsc: what `--help` (the top level, each group and command) prints at each
// width of LAID_OUT_WIDTHS, and what `completion` prints for each shell, laid out by yargs now and
// written to dist/src/cli/help-pages.json, which the CLI prints without loading yargs
// (src/cli/help-pages.ts, laidOutPage). test/e2e/laid-out-help.test.ts checks it against yargs.
import { writeFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { commandEntries } from '../dist/src/cli/commands.js';
import {
  COMPLETION_SHELLS,
  LAID_OUT_FILE,
  LAID_OUT_WIDTHS,
  laidOutRequests,
} from '../dist/src/cli/help-pages.js';
import { runYargs } from '../dist/src/cli/run-cli.js';

/** What `dds-migrate ARGV` prints on a stdout of `columns`, laid out by yargs. */
async function print(argv, columns) {
  let text = '';
  const stdout = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    }),
    { columns },
  );
  const code = await runYargs(argv, { stdout, stderr: process.stderr, env: {}, cwd: process.cwd() });
  if (code !== 0) throw new Error(`dds-migrate ${argv.join(' ')} exited ${code}`);
  return text;
}

const help = {};
for (const width of LAID_OUT_WIDTHS) {
  help[width] = {};
  for (const argv of laidOutRequests(commandEntries)) help[width][argv.join(' ')] = await print(argv, width);
}
// yargs picks the completion script by the process's $SHELL (and $ZSH_NAME), read as each parser starts.
const completion = {};
delete process.env.ZSH_NAME;
for (const shell of COMPLETION_SHELLS) {
  process.env.SHELL = `/bin/${shell}`;
  completion[shell] = await print(['completion'], 100);
}
await writeFile(LAID_OUT_FILE, `${JSON.stringify({ help, completion })}\n`);
