/**
 * Runs every benchmark, each in its own process so that peak RSS figures do not mix, and prints
 * their figures. `npm run bench` builds first. Pass names to run a subset: `npm run bench -- diff`, or
 * `npm run bench -- --only startup,clone`.
 * Exits 1 when a benchmark misses its goal (the figures are printed either way).
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCHES = [
  'validate',
  'export',
  'diff',
  'import',
  'emulator',
  'scale',
  'startup',
  'clone',
  'encrypted',
] as const;

const here = dirname(fileURLToPath(import.meta.url));
// Names as arguments, or comma-separated after --only.
const wanted = process.argv
  .slice(2)
  .filter((arg) => arg !== '--only')
  .flatMap((arg) => arg.split(','));
const selected = wanted.length === 0 ? BENCHES : BENCHES.filter((name) => wanted.includes(name));
let failed = 0;
for (const name of selected) {
  process.stdout.write(`\n== bench/${name} ==\n`);
  const run = spawnSync(process.execPath, ['--expose-gc', join(here, `${name}.js`)], { stdio: 'inherit' });
  if (run.status !== 0) failed += 1;
}
process.stdout.write(`\n${selected.length - failed} of ${selected.length} benchmarks met their goals\n`);
process.exitCode = failed === 0 ? 0 : 1;
