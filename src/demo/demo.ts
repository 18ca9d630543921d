// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
/**
 * `npm run demo`: a one-minute disaster-recovery rehearsal, nothing to set up. The real CLI runs in-process
 * against two emulators (prod, an empty target); each step prints its command, a one-line result and where to
 * look. The CLI's output is read, not echoed (a plan of 69 lines), each warning once; secrets scrubbed.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { CliIo, TextStream } from '../cli/context.js';
import { runCli } from '../cli/run-cli.js';
import { type RunningEmulator, startEmulator } from '../emulator/index.js';
import { fixturesDir } from '../paths.js';
import { registerSecret, scrub } from '../secrets.js';
import { loadSnapshot } from '../snapshot/read.js';

const PLACEHOLDER = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/;

export interface DemoIo {
  readonly stdout: TextStream;
  readonly stderr: TextStream;
  readonly signal?: AbortSignal;
}

interface CliOutcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function createCapture(): { readonly stream: TextStream; text(): string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** A warning without its entry and its count (validate names `entry (type) /path`, import `entry /path`). */
function warningKey(line: string): string {
  return line
    .replace(/^warning: [^ ]+(?: \([^)]*\))? \/[^ ]*: /, 'warning: ')
    .replace(/: \d+ times \(e\.g\. .*$/, '');
}

function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}

/** The outcomes of a `--report` counted by object and outcome: `connection created`. */
async function countReport(path: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const line of (await readFile(path, 'utf8')).split('\n')) {
    if (line.trim() === '') continue;
    const record = JSON.parse(line) as { object?: string; outcome?: string; state?: string };
    const key = `${record.object} ${record.outcome ?? record.state}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/** Run the demo; resolves to 0 when every step behaved as expected, else 1. */
export async function runDemo(io: DemoIo): Promise<number> {
  const started = Date.now();
  const dir = await mkdtemp(join(tmpdir(), 'dds-migrate-demo-'));
  const say = (text = ''): void => {
    io.stdout.write(`${scrub(text).replaceAll(dir, '$DEMO')}\n`);
  };
  const step = (title: string): void => say(`\n${title}`);
  const result = (text: string): void => say(`   -> ${text}`);
  const look = (text: string): void => say(`   look: ${text}`);
  let prod: RunningEmulator | undefined;
  let recovery: RunningEmulator | undefined;
  let failures = 0;
  const seenWarnings = new Set<string>();

  const expectCode = (run: CliOutcome, expected: number, what: string): void => {
    if (run.code === expected) result(`exit ${run.code}: ${what}`);
    else {
      failures += 1;
      result(`exit ${run.code}, expected ${expected}  <-- UNEXPECTED`);
      for (const line of run.stderr.split('\n').filter((l) => l.startsWith('error: '))) say(`   ${line}`);
    }
  };

  try {
    say('dds-migrate demo: a disaster-recovery rehearsal on this machine (two local emulators).');
    say('Files go to $DEMO, a temporary folder removed at the end.');

    step('1. Start a production-like environment and an empty recovery one');
    prod = await startEmulator({
      data: join(fixturesDir(), 'environments', 'prod.json'),
      token: 'demo-prod-token',
    });
    // A recovery site holds prod's scanner groups and stored credentials: the pre-flight checks both.
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
    say(
      `   prod:     ${prod.url}  (${prod.store.connections.length} connections, ${prod.store.profiles.length} scan profiles)`,
    );
    say(`   recovery: ${recovery.url}  (empty; the same scanner groups and stored credentials)`);

    const env: Record<string, string | undefined> = {
      DDS_SOURCE_TOKEN: prod.token,
      DDS_TARGET_TOKEN: recovery.token,
      DDS_TOKEN: recovery.token,
    };
    const cli = async (argv: string[]): Promise<CliOutcome> => {
      say(`   $ dds-migrate ${argv.join(' ')}`);
      const out = createCapture();
      const err = createCapture();
      const cliIo: CliIo = {
        stdout: out.stream,
        stderr: err.stream,
        env,
        cwd: dir,
        ...(io.signal ? { signal: io.signal } : {}),
      };
      const code = await runCli(argv, cliIo);
      const stderr = err.text();
      for (const line of stderr.split('\n').filter((l) => l.startsWith('warning: '))) {
        const key = warningKey(line);
        if (seenWarnings.has(key)) continue;
        seenWarnings.add(key);
        say(`   ${line}`);
      }
      return { code, stdout: out.text(), stderr };
    };

    step('2. Export prod to a snapshot');
    const snapshot = join(dir, 'prod.snapshot.jsonl');
    const exported = await cli(['export', '--from', prod.url, '-o', snapshot, '--no-progress']);
    const { entries, profiles: exportedProfiles } =
      exported.code === 0 ? await loadSnapshot(snapshot) : { entries: [], profiles: [] };
    expectCode(
      exported,
      0,
      `${entries.length} connections and ${exportedProfiles.length} scan profiles; secrets arrive masked ("******")`,
    );
    look('the snapshot is JSON Lines: a header, one connection (or scan profile) a line, a trailer');

    step('3. Validate the snapshot against the template schemas');
    const validated = await cli(['validate', snapshot]);
    expectCode(validated, 0, lastLine(validated.stdout));
    look("--verbose lists every warning; --templates-from ENV checks against the target's own templates");

    step('4. Diff the snapshot against the recovery target');
    const diffed = await cli(['diff', '--from', snapshot, '--to', recovery.url]);
    expectCode(diffed, 1, lastLine(diffed.stdout));
    look('one + line per connection to create; exit 1 means differences; --format json for a script');

    step('5. Write an overrides file: one variable per masked secret');
    const overridesPath = join(dir, 'recovery-overrides.json');
    const init = await cli(['overrides', 'init', snapshot, '-o', overridesPath]);
    const overrides =
      init.code === 0
        ? (JSON.parse(await readFile(overridesPath, 'utf8')) as {
            byName: Record<string, Record<string, unknown>>;
          })
        : { byName: {} };
    // In a real recovery a vault sets the variables; here the demo reads prod's store.
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
    expectCode(
      init,
      0,
      `${variables} variables for the secrets of ${Object.keys(overrides.byName).length} connections; the demo sets them, as a vault would`,
    );
    look('the file holds a ${env:NAME} placeholder per secret, never a value; its stdout lists the names');

    step('6. Dry run: what the import would do');
    const importArgs = ['import', snapshot, '--to', recovery.url, '--overrides', overridesPath];
    const planned = await cli([...importArgs, '--dry-run']);
    expectCode(planned, 0, `${lastLine(planned.stdout)} (nothing sent)`);
    look('one plan line per connection and scan profile: why each is created, updated or skipped');

    step('7. Import: throttled, journaled, each connection created exactly once');
    const report = join(dir, 'report.jsonl');
    const idMap = join(dir, 'id-map.json');
    const runArgs = [...importArgs, '--id-map', idMap, '--report', report, '--no-progress'];
    const imported = await cli(runArgs);
    const outcomes = imported.code === 0 ? await countReport(report) : new Map<string, number>();
    expectCode(
      imported,
      0,
      `${outcomes.get('connection created') ?? 0} connections and ${outcomes.get('scan profile created') ?? 0} scan profiles created; ${outcomes.get('scan profile skipped') ?? 0} one-time scan profile skipped (it would start a scan)`,
    );
    look('--report: one JSON line per outcome; the journal beside the snapshot makes a re-run safe');

    step('8. Run the same command again: it resumes, nothing is sent twice');
    const postsBefore = recovery.record.requests.filter((r) => r.method === 'POST').length;
    const again = await cli(runArgs);
    const postsAgain = recovery.record.requests.filter((r) => r.method === 'POST').length - postsBefore;
    if (postsAgain !== 0) failures += 1;
    expectCode(again, 0, `${postsAgain} POSTs sent again; every connection was already done`);

    step('9. Check the recovery target (the demo looks inside the emulator)');
    const counts = entries.map((e) => recovery?.record.createCount(e.name) ?? 0);
    const once = counts.filter((n) => n === 1).length;
    const missing = counts.filter((n) => n === 0).length;
    const twice = counts.filter((n) => n > 1).length;
    say(`   created exactly once: ${once}; missing: ${missing}; duplicated: ${twice}`);
    if (once !== entries.length || recovery.store.connections.length !== entries.length) failures += 1;
    const profiles = prod.store.profiles.filter((p) => p.isSingleRunScan !== true).map((p) => p.name);
    const restored = profiles.filter((n) => recovery?.record.createCount(n, 'scanProfile') === 1).length;
    say(
      `   scheduled scan profiles restored once: ${restored} of ${profiles.length}; scans started: ${recovery.store.scansStarted.length}`,
    );
    if (restored !== profiles.length || recovery.store.scansStarted.length !== 0) failures += 1;

    step('10. Verify the restore: complete, equal, and working');
    // Sources already failing in prod fail in recovery too: known-bad, not regressions.
    const failingInProd = entries
      .filter((e) => (e.connectionStatusTest as { is_success?: unknown } | undefined)?.is_success === false)
      .map((e) => e.name);
    recovery.setTestFailures(failingInProd);
    const changesBefore = recovery.record.changes.length;
    const verifyReport = join(dir, 'verify.jsonl');
    const verified = await cli([
      'verify',
      snapshot,
      '--env',
      recovery.url,
      '--overrides',
      overridesPath,
      '--test-connections',
      '--rate',
      '100',
      '--report',
      verifyReport,
      '--no-progress',
    ]);
    const states = verified.code === 0 ? await countReport(verifyReport) : new Map<string, number>();
    const tests = recovery.record.changes.slice(changesBefore);
    const testCount = tests.filter((c) => c.op === 'test').length;
    if (testCount !== entries.length || tests.length !== testCount) failures += 1;
    expectCode(
      verified,
      0,
      `complete: ${states.get('connection present') ?? 0} connections and ${states.get('scan profile present') ?? 0} scan profiles present, ${states.get('scan profile skipped') ?? 0} one-time profile skipped by design; ${testCount} connections tested, the ${failingInProd.length} failing in prod known-bad`,
    );
    look('--report: one JSON line per object; --overrides compares the fields it sets with its values');

    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    say(
      failures === 0
        ? `\nDemo finished in ${seconds} s: OK. Next: README.md, and dds-migrate --help.`
        : `\nDemo finished in ${seconds} s: ${failures} problem(s)`,
    );
    return failures === 0 ? 0 : 1;
  } finally {
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
