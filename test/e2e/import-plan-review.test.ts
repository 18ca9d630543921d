/**
 * A plan a reviewer can trust, end to end against the emulator: an update names the secrets it writes
 * and where each value comes from (snapshot or overrides) on the dry run's lines, in its `--format
 * json` plan and in the run's `--report`; `diff --format markdown` and `import --dry-run --format
 * markdown|json` on a drifted target match their golden files, the Markdown parses into a counts table
 * with the right cells and holds no secret value; `import --only 'finance-*' --type snowflake --prune`
 * touches that selection only.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { marked, type Tokens } from 'marked';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import type { Connection } from '../../src/model/connection.js';
import { fixturesDir } from '../../src/paths.js';
import { clearRegisteredSecrets } from '../../src/secrets.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { writeSnapshot } from './import.helpers.js';

type Row = Record<string, unknown>;

const GOLDEN = join(fixturesDir(), 'render', '002-plan-markdown');
/** Stale in the target: a changed description (finance-sf and hr-analytics-sf hold a password). */
const STALE = ['finance-invoices-s3', 'finance-sf', 'hr-analytics-sf', 'hr-payroll-pg'];
const MISSING = ['data-warehouse-sf', 'hr-documents-s3'];
/** Only in the target, copies of: */
const EXTRA: Record<string, string> = { 'finance-old-sf': 'finance-sf', 'old-hr-pg': 'hr-payroll-pg' };

/** Every string value of the prod fixture's secrets (passwords, keys): none may be printed. */
function secretValues(connections: readonly Row[]): string[] {
  const out: string[] = [];
  for (const c of connections)
    for (const [k, v] of Object.entries(c))
      if (/password|secret_key|access_key|private_key/.test(k) && typeof v === 'string' && v.length > 3)
        out.push(v);
  return out;
}

describe('the plan a reviewer reads (end to end, against the emulator)', () => {
  let source: RunningEmulator;
  let target: RunningEmulator;
  let dir: string;
  let snapshot: string;
  let clear: Row[];

  beforeAll(async () => {
    source = await startEmulator({ data: join(fixturesDir(), 'environments', 'prod.json') });
    dir = await makeTempDir('plan-review-');
    snapshot = join(dir, 'prod.snapshot.jsonl');
    // A snapshot holding the secrets in the clear (as an export with a service that returns them).
    clear = (source.store.connections as unknown as Row[])
      .map((c) => structuredClone(c))
      .sort((a, b) => (String(a.name) < String(b.name) ? -1 : 1));
    await writeSnapshot(snapshot, clear as unknown as Connection[], 'https://prod.example.test');
  });
  afterAll(async () => {
    await source.close();
  });

  beforeEach(async () => {
    const rows: Row[] = [];
    for (const c of clear) {
      const name = String(c.name);
      if (MISSING.includes(name)) continue;
      const copy = structuredClone(c);
      if (STALE.includes(name)) copy.description = 'stale copy';
      rows.push(copy);
    }
    for (const [name, from] of Object.entries(EXTRA)) {
      const copy = structuredClone(clear.find((c) => c.name === from) as Row);
      delete copy._id;
      rows.push({ ...copy, name, id: name });
    }
    target = await startEmulator({ data: { connections: rows as never } });
  });
  afterEach(async () => {
    await target.close();
    clearRegisteredSecrets();
  });

  const env = () => ({ DDS_TARGET_TOKEN: target.token, DDS_SOURCE_TOKEN: target.token });
  const importArgs = (...extra: string[]) => [
    'import',
    snapshot,
    '--to',
    target.url,
    '--journal',
    join(dir, `${new URL(target.url).port}.journal.jsonl`),
    '--no-progress',
    ...extra,
  ];
  const normalise = (text: string) => text.replaceAll(target.url.replace(/^https?:\/\//, ''), 'TARGET');

  it('a converging dry run names the secrets each update writes and where each comes from', async () => {
    const overrides = join(dir, 'overrides.json');
    await writeFile(
      overrides,
      JSON.stringify({ byName: { 'hr-analytics-sf': { password: 'from-overrides-1' } } }),
    );
    const dry = await runCli(
      importArgs('--on-conflict', 'update', '--prune', '--dry-run', '--overrides', overrides),
      { env: env() },
    );
    expect(dry.stderr).not.toMatch(/error/i);
    expect(dry.exitCode).toBe(0);
    const lines = dry.stdout.split('\n');
    const updates = lines.flatMap((l, i) => (/^ {2}update {5}/.test(l) ? [i] : []));
    expect(updates.map((i) => lines[i]?.split(/\s+/)[2])).toEqual([...STALE].sort());
    for (const i of updates) {
      const name = lines[i]?.split(/\s+/)[2] ?? '';
      const under = lines
        .slice(i + 1)
        .filter((_, j, all) => all.slice(0, j + 1).every((l) => l.startsWith('             ')));
      const entry = clear.find((c) => c.name === name) as Row;
      if (typeof entry.password === 'string') {
        const from = name === 'hr-analytics-sf' ? 'overrides' : 'snapshot';
        expect(under).toContain(`             /password: written (from the ${from})`);
      } else expect(under.join('\n')).not.toMatch(/password/);
    }
    // The s3 update writes its keys too.
    expect(dry.stdout).toMatch(/\/aws_secret_key: written \(from the snapshot\)/);
    for (const value of [...secretValues(clear), 'from-overrides-1']) {
      expect(dry.stdout).not.toContain(value);
      expect(dry.stderr).not.toContain(value);
    }

    // The same in the JSON plan, and in the run's report (names and origins, never values).
    const json = await runCli(
      importArgs('--on-conflict', 'update', '--dry-run', '--format', 'json', '--overrides', overrides),
      { env: env() },
    );
    const plan = JSON.parse(json.stdout) as {
      steps: { kind: string; name: string; secretsWritten?: { path: string; from: string }[] }[];
    };
    expect(plan.steps.find((s) => s.name === 'finance-sf')?.secretsWritten).toEqual([
      { path: '/password', from: 'snapshot' },
    ]);
    expect(plan.steps.find((s) => s.name === 'hr-analytics-sf')?.secretsWritten).toEqual([
      { path: '/password', from: 'overrides' },
    ]);
    const report = join(dir, 'report.jsonl');
    const run = await runCli(
      importArgs('--on-conflict', 'update', '--overrides', overrides, '--report', report),
      { env: env() },
    );
    expect(run.exitCode).toBe(0);
    const reportText = await readFile(report, 'utf8');
    const updated = reportText
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { name: string; outcome: string; secretsWritten?: unknown })
      .filter((l) => l.outcome === 'updated');
    expect(updated.find((l) => l.name === 'finance-sf')?.secretsWritten).toEqual([
      { path: '/password', from: 'snapshot' },
    ]);
    for (const value of secretValues(clear)) expect(reportText).not.toContain(value);
  });

  /** Compare with the golden file (UPDATE_GOLDEN=1 writes it). */
  function golden(name: string, text: string): void {
    const file = join(GOLDEN, name);
    if (process.env.UPDATE_GOLDEN === '1' || !existsSync(file)) writeFileSync(file, text);
    expect(text).toBe(readFileSync(file, 'utf8'));
  }

  /** The counts table of a Markdown plan, parsed: header cells, then each row's cells. */
  function countsTable(markdown: string): string[][] {
    const table = marked.lexer(markdown).find((t) => t.type === 'table') as Tokens.Table | undefined;
    if (table === undefined) throw new Error('no table in the Markdown');
    return [table.header.map((c) => c.text), ...table.rows.map((r) => r.map((c) => c.text))];
  }

  it('diff --format markdown and import --dry-run --format markdown|json on a drifted target', async () => {
    const diff = await runCli(['diff', '--from', snapshot, '--to', target.url, '--format', 'markdown'], {
      env: env(),
    });
    expect(diff.exitCode).toBe(1);
    golden('diff.md', normalise(diff.stdout));
    expect(countsTable(diff.stdout)).toEqual([
      ['', 'Create', 'Update', 'Delete', 'Unchanged'],
      ['Connections', '2', '4', '2', String(clear.length - MISSING.length - STALE.length)],
    ]);
    expect(diff.stdout).toMatch(/secret `\/password`: masked, not compared/);

    const md = await runCli(
      importArgs('--on-conflict', 'update', '--prune', '--dry-run', '--format', 'markdown'),
      {
        env: env(),
      },
    );
    expect(md.exitCode).toBe(0);
    golden('import-plan.md', normalise(md.stdout));
    expect(countsTable(md.stdout)).toEqual([
      ['', 'Create', 'Update', 'Delete', 'Unchanged'],
      ['Connections', '2', '4', '2', String(clear.length - MISSING.length - STALE.length)],
    ]);
    const tokens = marked.lexer(md.stdout);
    const headings = tokens.filter((t) => t.type === 'heading').map((t) => (t as Tokens.Heading).text);
    expect(headings).toEqual([
      expect.stringMatching(/^Import plan: \d+ snapshot entries into `TARGET|127/),
      'Connections to create',
      'Connections to update',
      'Connections to delete',
    ]);
    expect(md.stdout).toMatch(/- secret `\/password`: written \(from the snapshot\)/);
    for (const value of secretValues(clear)) {
      expect(md.stdout).not.toContain(value);
      expect(diff.stdout).not.toContain(value);
    }

    const json = await runCli(
      importArgs('--on-conflict', 'update', '--prune', '--dry-run', '--format', 'json'),
      {
        env: env(),
      },
    );
    expect(json.exitCode).toBe(0);
    golden('import-plan.json', normalise(json.stdout));
    const withJson = await runCli(
      [...importArgs('--on-conflict', 'update', '--prune', '--dry-run'), '--json'],
      {
        env: env(),
      },
    );
    expect(json.stdout).toBe(withJson.stdout);
    const notDry = await runCli(importArgs('--format', 'markdown'), { env: env() });
    expect(notDry.exitCode).toBe(2);
    expect(notDry.stderr).toMatch(/--format applies to the plan of a dry run/);
    expect(target.record.changes).toEqual([]);
  });

  it("import --only 'finance-*' --type snowflake --prune touches only that selection", async () => {
    const run = await runCli(
      importArgs('--only', 'finance-*', '--type', 'snowflake', '--on-conflict', 'update', '--prune'),
      { env: env() },
    );
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.exitCode).toBe(0);
    const touched = target.record.changes.map((c) => `${c.op} ${c.name}`).sort();
    expect(touched).toEqual(['delete finance-old-sf', 'update finance-sf']);
    // Outside the selection: the stale s3, the missing snowflake, the extra postgres are left as they were.
    expect(target.store.getConnection('finance-invoices-s3')?.description).toBe('stale copy');
    expect(target.store.getConnection('data-warehouse-sf')).toBeUndefined();
    expect(target.store.getConnection('old-hr-pg')).toBeDefined();

    const none = await runCli(importArgs('--only', 'nothing-*', '--dry-run'), { env: env() });
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toMatch(/--only names connections that are not in the snapshot: nothing-\*/);
  });
});
