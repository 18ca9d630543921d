/**
 * Every command that reads a journal (`import`, `runs`, `undo`) refuses a record of a kind no `SyncKind`
 * registers, naming the line, as the CLI loads it: this file imports no engine module itself, so
 * the kinds are registered only if the command's own modules load `sync/kind.ts`.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const at = '2026-01-01T00:00:01.000Z';
const records = [
  {
    kind: 'begin',
    formatVersion: 2,
    snapshotSha256: 'a'.repeat(64),
    targetUrl: 'http://127.0.0.1:9',
    tool: 'dds-migrate test',
    at,
  },
  { kind: 'run', run: 1, command: 'import', tool: 'dds-migrate test', at },
  { kind: 'intent', run: 1, object: 'widget', op: 'create', name: 'w', targetName: 'w', attempt: 1, at },
];

async function journalWithWidget(): Promise<{ journal: string; snapshot: string }> {
  const dir = await makeTempDir('dds-journal-unknown-');
  const journal = join(dir, 'j.jsonl');
  await writeFile(journal, records.map((r) => `${JSON.stringify(r)}\n`).join(''), { mode: 0o600 });
  const snapshot = join(dir, 's.snapshot.jsonl');
  const header = createSnapshotHeader({
    tool: 'test',
    source: { url: 'https://prod.example.com', environment: 'prod' },
  });
  await writeSnapshot({ path: snapshot }, header, []);
  return { journal, snapshot };
}

describe('a journal record of an unregistered kind', () => {
  it.each([
    ['import', (j: string, s: string) => ['import', s, '--to', 'http://127.0.0.1:9', '--journal', j]],
    ['runs', (j: string) => ['runs', j]],
    ['undo', (j: string) => ['undo', j, '--dry-run']],
  ])('%s refuses it, naming the line (exit 2)', async (_name, argv) => {
    const { journal, snapshot } = await journalWithWidget();
    const result = await runCli(argv(journal, snapshot), { env: { DDS_TARGET_TOKEN: 't' } });
    expect(result.stderr).toMatch(/unknown object "widget"/);
    expect(result.stderr).toMatch(/\b3\b/);
    expect(result.exitCode).toBe(2);
  });
});
