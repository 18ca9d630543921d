// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
/**
 * `npm run demo`: a disaster-recovery rehearsal in under a minute, with nothing to set up.
 *
 * Two emulators start in-process: "prod" (the production-like fixture) and an empty "recovery" target.
 * The real CLI (in-process, real stdout/stderr) then exports prod, validates the snapshot, diffs it
 * against recovery, writes the overrides skeleton (`overrides init`: one variable per secret the export
 * masked), sets the variables (the demo plays the part of the vault that would set them), imports, re-runs the
 * import to show it resumes with zero POSTs, checks that recovery holds every connection once, and ends
 * with `verify --test-connections` (the sources already failing in prod fail again: known-bad; the
 * one-time profile the import skipped is reported missing: exit 1, as expected).
 * The demo's secrets are registered for scrubbing and never printed.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CliIo, TextStream } from '../cli/context.js';
import { runCli } from '../cli/run-cli.js';
import { type RunningEmulator, startEmulator } from '../emulator/index.js';
import { fixturesDir } from '../paths.js';
import { registerSecret, scrub } from '../secrets.js';

/** `${env:NAME}` as `overrides init` writes it. */
const PLACEHOLDER = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** Where the demo writes. */
export interface DemoIo {
  readonly stdout: TextStream;
  readonly stderr: TextStream;
  readonly signal?: AbortSignal;
}

interface SnapshotEntry {
  readonly name: string;
  readonly type: string;
  readonly [field: string]: unknown;
}

/** Run the demo; resolves to 0 when every step behaved as expected, else 1. */
export async function runDemo(io: DemoIo): Promise<number> {
  const started = Date.now();
  const say = (text = ''): void => {
    io.stdout.write(`${scrub(text)}\n`);
  };
  const section = (title: string): void =>
    say(`\n=== ${title} ${'='.repeat(Math.max(3, 72 - title.length))}`);
  const dir = await mkdtemp(join(tmpdir(), 'dds-migrate-demo-'));
  let prod: RunningEmulator | undefined;
  let recovery: RunningEmulator | undefined;
  let failures = 0;

  const expectCode = (step: string, code: number, expected: readonly number[]): void => {
    if (expected.includes(code)) say(`-> ${step}: exit ${code} (as expected)`);
    else {
      failures += 1;
      say(`-> ${step}: exit ${code}, expected ${expected.join(' or ')}  <-- UNEXPECTED`);
    }
  };

  try {
    section('1. Two environments: prod (fixture) and an empty recovery target');
    prod = await startEmulator({
      data: join(fixturesDir(), 'environments', 'prod.json'),
      token: 'demo-prod-token',
    });
    // The recovery site has the same scanner groups and stored credentials as prod (set up before a
    // restore): the import's pre-flight checks both.
    recovery = await startEmulator({
      data: {
        connections: [],
        scanners: prod.store.scanners.map((s) => ({ ...s })),
        credentials: prod.store.credentials.map((c) => ({ ...c })),
      },
      token: 'demo-recovery-token',
    });
    registerSecret(prod.token);
    registerSecret(recovery.token);
    say(`prod:     ${prod.url}  (${prod.store.connections.length} connections)`);
    say(`recovery: ${recovery.url}  (${recovery.store.connections.length} connections)`);

    const env: Record<string, string | undefined> = {
      DDS_SOURCE_TOKEN: prod.token,
      DDS_TARGET_TOKEN: recovery.token,
      DDS_TOKEN: recovery.token,
    };
    const cli = async (argv: string[]): Promise<number> => {
      say(`\n$ dds-migrate ${argv.map((a) => (a.includes(dir) ? a.replace(dir, '$DEMO') : a)).join(' ')}`);
      const cliIo: CliIo = {
        stdout: io.stdout,
        stderr: io.stderr,
        env,
        cwd: dir,
        ...(io.signal ? { signal: io.signal } : {}),
      };
      return runCli(argv, cliIo);
    };

    section('2. Export prod to a snapshot (secrets arrive masked)');
    const snapshot = join(dir, 'prod.snapshot.jsonl');
    expectCode('export', await cli(['export', '--from', prod.url, '-o', snapshot, '--no-progress']), [0]);

    section('3. Validate the snapshot against the template schemas');
    expectCode('validate', await cli(['validate', snapshot]), [0]);

    section('4. Diff the snapshot against the recovery target (everything is missing there)');
    expectCode('diff', await cli(['diff', '--from', snapshot, '--to', recovery.url]), [1]);

    section('5. Overrides: one variable per masked secret (overrides init)');
    const overridesPath = join(dir, 'recovery-overrides.json');
    expectCode('overrides init', await cli(['overrides', 'init', snapshot, '-o', overridesPath]), [0]);
    const entries = (await readFile(snapshot, 'utf8'))
      .split('\n')
      .slice(1, -2)
      .map((line) => JSON.parse(line) as SnapshotEntry)
      // Scan profile lines (snapshot format 2) have no top-level name: connections only here.
      .filter((entry) => typeof entry.name === 'string');
    const overrides = JSON.parse(await readFile(overridesPath, 'utf8')) as {
      byName: Record<string, Record<string, unknown>>;
    };
    // In a real recovery a vault or CI secret store sets the variables; here the demo reads prod's store.
    let variables = 0;
    const setVariable = (placeholder: unknown, value: unknown): void => {
      const name = typeof placeholder === 'string' ? PLACEHOLDER.exec(placeholder)?.[1] : undefined;
      if (name === undefined) return;
      env[name] = String(value ?? '');
      registerSecret(env[name]);
      variables += 1;
    };
    for (const [name, block] of Object.entries(overrides.byName)) {
      const real = (prod.store.getConnection(name) ?? {}) as Record<string, unknown>;
      for (const [field, value] of Object.entries(block)) {
        if (field === 'custom_fields' && Array.isArray(value)) {
          const realFields = (real.custom_fields ?? []) as { field_name?: unknown; field_value?: unknown }[];
          for (const f of value as { field_name?: unknown; field_value?: unknown }[])
            setVariable(f.field_value, realFields.find((r) => r.field_name === f.field_name)?.field_value);
        } else {
          setVariable(value, real[field]);
        }
      }
    }
    const firstName = Object.keys(overrides.byName)[0];
    say(
      `${Object.keys(overrides.byName).length} connections have masked secrets; ${variables} environment variables set.`,
    );
    say('Excerpt of the overrides file (placeholders only, no secret values):');
    say(JSON.stringify({ byName: firstName ? { [firstName]: overrides.byName[firstName] } : {} }, null, 2));

    section('6. Dry run: what the import would do');
    expectCode(
      'import --dry-run',
      await cli(['import', snapshot, '--to', recovery.url, '--overrides', overridesPath, '--dry-run']),
      [0],
    );

    section('7. Import (throttled, journaled, exactly once)');
    const idMap = join(dir, 'id-map.json');
    const report = join(dir, 'report.jsonl');
    const importArgs = [
      'import',
      snapshot,
      '--to',
      recovery.url,
      '--overrides',
      overridesPath,
      '--id-map',
      idMap,
      '--report',
      report,
      '--no-progress',
    ];
    expectCode('import', await cli(importArgs), [0]);

    section('8. Re-run the same command: it resumes, nothing is sent again');
    const postsBefore = recovery.record.requests.filter((r) => r.method === 'POST').length;
    expectCode('import (again)', await cli(importArgs), [0]);
    const postsAgain = recovery.record.requests.filter((r) => r.method === 'POST').length - postsBefore;
    say(`POSTs sent by the re-run: ${postsAgain}`);
    if (postsAgain !== 0) failures += 1;

    section('9. Check: the recovery target holds every connection exactly once');
    const counts = entries.map((e) => recovery?.record.createCount(e.name) ?? 0);
    const once = counts.filter((n) => n === 1).length;
    const missing = counts.filter((n) => n === 0).length;
    const twice = counts.filter((n) => n > 1).length;
    say(`snapshot entries: ${entries.length}; in recovery: ${recovery.store.connections.length}`);
    say(`created exactly once: ${once}; missing: ${missing}; duplicated: ${twice}`);
    const profiles = prod.store.profiles.filter((p) => p.isSingleRunScan !== true).map((p) => p.name);
    const restored = profiles.filter((n) => recovery?.record.createCount(n, 'scanProfile') === 1).length;
    say(
      `scheduled scan profiles restored once: ${restored} of ${profiles.length}; scans started: ${recovery.store.scansStarted.length}`,
    );
    if (restored !== profiles.length || recovery.store.scansStarted.length !== 0) failures += 1;
    const ids = Object.keys(JSON.parse(await readFile(idMap, 'utf8')) as object).length;
    say(`id map: ${ids} source ids mapped to recovery ids (for profiles clone --id-map)`);
    if (once !== entries.length || recovery.store.connections.length !== entries.length) failures += 1;

    section('10. Verify the restore: complete, equal, and working');
    // The sources whose last test had failed in prod fail in recovery too: known-bad, not regressions.
    // The one-time profiles the import skipped (no --allow-run) are missing: verify says so, exit 1.
    const oneTime = prod.store.profiles.filter((p) => p.isSingleRunScan === true).map((p) => p.name);
    const failingInProd = entries
      .filter((e) => (e.connectionStatusTest as { is_success?: unknown } | undefined)?.is_success === false)
      .map((e) => e.name);
    recovery.setTestFailures(failingInProd);
    const changesBefore = recovery.record.changes.length;
    const verifyArgs = ['verify', snapshot, '--env', recovery.url];
    expectCode(
      'verify --test-connections',
      await cli([...verifyArgs, '--test-connections', '--rate', '100', '--no-progress']),
      [oneTime.length > 0 ? 1 : 0],
    );
    if (oneTime.length > 0) {
      say(
        `(exit 1: the import skipped the one-time profile${oneTime.length === 1 ? '' : 's'} ${oneTime.join(', ')} on purpose, so the restore is not complete)`,
      );
    }
    const changes = recovery.record.changes.slice(changesBefore);
    const tests = changes.filter((c) => c.op === 'test').length;
    const otherWrites = changes.length - tests;
    say(`connection tests sent: ${tests} (one per connection); known-bad in prod: ${failingInProd.length}`);
    if (tests !== entries.length || otherWrites !== 0) failures += 1;

    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    section(
      failures === 0
        ? `Demo finished in ${seconds} s: OK`
        : `Demo finished in ${seconds} s: ${failures} problem(s)`,
    );
    return failures === 0 ? 0 : 1;
  } finally {
    // The folder goes even when a step threw or an emulator failed to close: a demo leaves nothing behind.
    try {
      await Promise.all([prod?.close(), recovery?.close()]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  const controller = new AbortController();
  process.on('SIGINT', () => controller.abort());
  const code = await runDemo({ stdout: process.stdout, stderr: process.stderr, signal: controller.signal });
  process.exitCode = code;
}
