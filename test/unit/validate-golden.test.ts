/**
 * Golden validation reports: each `fixtures/validate/NNN-name/` holds `entries.json` (the test writes a
 * snapshot of them) or a ready `snapshot.jsonl`, and `expected.json`: the exit code and the `--json`
 * report (without its `snapshot` block, which names a temporary path) or the error line.
 * `UPDATE_GOLDEN=1` rewrites the expected files; review the diff before committing.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../../src/model/connection.js';
import { fixturesDir } from '../../src/paths.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const root = join(fixturesDir(), 'validate');
const scenarios = (await readdir(root)).filter((d) => /^\d{3}-/.test(d)).sort();
let tmp: string;

beforeAll(async () => {
  tmp = await makeTempDir('dds-golden-');
});

describe('golden validation reports (fixtures/validate)', () => {
  it('has scenarios', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(4);
  });

  it.each(scenarios)('%s', async (scenario) => {
    const folder = join(root, scenario);
    let path: string;
    if (existsSync(join(folder, 'entries.json'))) {
      const entries = JSON.parse(await readFile(join(folder, 'entries.json'), 'utf8')) as Connection[];
      path = join(tmp, `${scenario}.snapshot.jsonl`);
      const header = createSnapshotHeader({
        tool: 'dds-migrate 0.1.0',
        source: { url: 'https://prod.example.com', environment: 'prod' },
        createdAt: new Date('2026-11-22T10:00:00.000Z'),
      });
      await writeSnapshot({ path }, header, entries);
    } else {
      // Relative to the cwd the CLI runs in: the error names the file as typed.
      path = 'snapshot.jsonl';
    }
    const run = await runCli(['validate', path, '--json'], { cwd: folder });
    let actual: Record<string, unknown>;
    if (run.exitCode === 2) {
      actual = { exitCode: run.exitCode, stderr: run.stderr };
    } else {
      const { snapshot: _snapshot, ...report } = JSON.parse(run.stdout) as Record<string, unknown>;
      actual = { exitCode: run.exitCode, report };
    }
    const expectedPath = join(folder, 'expected.json');
    if (process.env.UPDATE_GOLDEN === '1')
      await writeFile(expectedPath, `${JSON.stringify(actual, null, 2)}\n`);
    expect(actual).toEqual(JSON.parse(await readFile(expectedPath, 'utf8')));
  });
});
