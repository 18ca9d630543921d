// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
/**
 * The local side: every local write that fails (a full disk, a folder that cannot be
 * written, a path naming a folder) is one FileWriteError or UsageError (exit 2), never "a bug"; the
 * audit trail stays whole lines; killed exports' temporary files are cleaned; malformed overrides,
 * out-of-range flags and a diff side with a name twice are refused.
 */
import { spawnSync } from 'node:child_process';
import { lstat, mkdir, open, readdir, readFile, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appendAuditRecords, type CaseAuditRecord } from '../../src/cases/audit.js';
import { CONCURRENCY_RANGE, checkNumberOption, RATE_RANGE } from '../../src/cli/options.js';
import { DdsError, ExitCode, FileWriteError, InputFileError, UsageError } from '../../src/errors.js';
import {
  checkWritableOutput,
  openAtomicTextFile,
  removeStaleTempFiles,
  STALE_TEMP_AGE_MS,
  writeFileAtomic,
} from '../../src/files.js';
import { checkOverrides, MAX_OVERRIDES_DEPTH } from '../../src/importer/overrides.js';
import { createLogger } from '../../src/log.js';
import type { Connection } from '../../src/model/connection.js';
import { schemasDir } from '../../src/paths.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { openJournal } from '../../src/sync/journal/writer.js';
import { diffConnections } from '../helpers/diff-arrays.js';
import { type FullDisk, mountFullDisk } from '../helpers/full-disk.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const disk = mountFullDisk();
const noDisk = typeof disk === 'string' ? disk : undefined;
const full = (): FullDisk => disk as FullDisk;
afterAll(() => {
  if (typeof disk !== 'string') disk.unmount();
});

/** The error as the CLI would show it: a typed error with exit code 2 (not a bug). */
async function expectExit2(promise: Promise<unknown>): Promise<DdsError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DdsError);
  expect((error as DdsError).exitCode).toBe(ExitCode.usage);
  return error as DdsError;
}

const SHA = 'a'.repeat(64);
const binding = { snapshotSha256: SHA, targetUrl: 'http://127.0.0.1:9000' };

describe(`local writes on a full disk (item 3)${noDisk ? ` [skipped: ${noDisk}]` : ''}`, () => {
  it.skipIf(noDisk)('writeFileAtomic: FileWriteError, no file and no temporary file', async () => {
    const path = join(full().dir, 'report.jsonl');
    const error = await expectExit2(writeFileAtomic(path, 'x'.repeat(10_000), { what: 'report' }));
    expect(error).toBeInstanceOf(FileWriteError);
    expect(error.message).toBe(`${path}: cannot write the report (ENOSPC)`);
    expect(error.toUserLine()).toContain('Free disk space');
    expect((await readdir(full().dir)).filter((n) => n !== '.filler')).toEqual([]);
  });

  it.skipIf(noDisk)('openAtomicTextFile (cases list -o): FileWriteError, no file left', async () => {
    const path = join(full().dir, 'cases.csv');
    const file = await openAtomicTextFile(path);
    file.write('y'.repeat(200_000));
    await expectExit2(file.drain().then(() => file.commit()));
    expect((await readdir(full().dir)).filter((n) => n !== '.filler')).toEqual([]);
  });

  it.skipIf(noDisk)('the journal: FileWriteError when its first record cannot be written', async () => {
    const error = await expectExit2(openJournal(join(full().dir, 'j.jsonl'), binding, { tool: 't' }));
    expect(error).toBeInstanceOf(FileWriteError);
    expect((await readdir(full().dir)).filter((n) => n.endsWith('.lock'))).toEqual([]);
  });

  it.skipIf(noDisk)('the snapshot (export -o): FileWriteError, no temporary file left', async () => {
    const path = join(full().dir, 'x.snapshot.jsonl');
    const header = createSnapshotHeader({
      tool: 't',
      source: { url: 'http://h', environment: 'e' },
      selection: {
        ids: null,
        types: null,
        name: null,
      },
    });
    const entries: Connection[] = [{ name: 'a', type: 's3', description: 'z'.repeat(50_000) } as Connection];
    const error = await expectExit2(writeSnapshot({ path }, header, entries));
    expect(error.message).toContain('cannot write the snapshot (ENOSPC)');
    expect((await readdir(full().dir)).filter((n) => n !== '.filler')).toEqual([]);
  });

  it.skipIf(noDisk)(
    'the log file: close() rejects with FileWriteError instead of an unhandled error',
    async () => {
      const path = join(full().dir, 'run.log');
      const log = createLogger({ level: 'silent', file: path });
      for (let i = 0; i < 200; i++) log.debug({ i }, 'x'.repeat(200));
      const error = await expectExit2(log.close());
      expect(error.message).toBe(`${path}: cannot write the log file (ENOSPC)`);
    },
  );

  it.skipIf(noDisk)('the audit trail: a failed append is cut back to the last whole line', async () => {
    const path = join(full().dir, 'audit.jsonl');
    // A first line while there is room, then a disk that fills in the middle of the next append.
    full().leaveRoom(16 * 1024);
    await appendAuditRecords(path, [auditRecord('c-0')]);
    const before = await readFile(path, 'utf8');
    full().leaveRoom(0);
    const many = Array.from({ length: 400 }, (_, i) => auditRecord(`c-${i + 1}`));
    await expectExit2(appendAuditRecords(path, many));
    expect(await readFile(path, 'utf8')).toBe(before);
  });
});

describe('the audit trail of a large update', () => {
  it('is written a bounded piece at a time, every line once and in order (a million joined pass the longest string)', async () => {
    const path = join(await makeTempDir('dds-audit-many-'), 'audit.jsonl');
    const many = Array.from({ length: 25_001 }, (_, i) => auditRecord(`c-${i}`));
    await appendAuditRecords(path, many);
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => (JSON.parse(l) as { caseId: string }).caseId)).toEqual(
      many.map((_, i) => `c-${i}`),
    );
  });
});

describe('local writes to paths that cannot be files (item 3)', () => {
  it('openJournal on a folder: FileWriteError (was EISDIR, exit 70)', async () => {
    const dir = await makeTempDir('dds-journal-dir-');
    const error = await expectExit2(openJournal(dir, binding, { tool: 't' }));
    expect(error.message).toContain('cannot write the journal (EISDIR)');
  });

  it('openJournal in a folder that refuses new files: FileWriteError (was a bug)', async () => {
    // /sys refuses new files even to root.
    await expectExit2(openJournal('/sys/x.journal.jsonl', binding, { tool: 't' }));
  });

  it('writeFileAtomic over a folder: FileWriteError (was EISDIR from rename, exit 70)', async () => {
    const dir = await makeTempDir('dds-report-dir-');
    await mkdir(join(dir, 'report.jsonl'));
    await expectExit2(writeFileAtomic(join(dir, 'report.jsonl'), 'x'));
    expect((await readdir(dir)).sort()).toEqual(['report.jsonl']);
  });

  it('checkWritableOutput: a folder, a missing folder and a read-only one are usage errors; a good path is untouched', async () => {
    const dir = await makeTempDir('dds-check-out-');
    const folder = await expectExit2(checkWritableOutput(dir, '--report'));
    expect(folder.toUserLine()).toBe(`Cannot write ${dir}: it is a folder. Name a file for --report`);
    await expect(checkWritableOutput(join(dir, 'no/such/r.jsonl'), '--report')).rejects.toBeInstanceOf(
      UsageError,
    );
    const readOnly = await expectExit2(checkWritableOutput('/sys/r.jsonl', '--id-map'));
    expect(readOnly.toUserLine()).toContain('Check --id-map');
    await checkWritableOutput(join(dir, 'r.jsonl'), '--report');
    expect(await readdir(dir)).toEqual([]);
  });

  it('a device, a pipe or a symbolic link at the path is refused and left as it was (was replaced by a file)', async () => {
    const dir = await makeTempDir('dds-non-regular-');
    const fifo = join(dir, 'pipe.jsonl');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const link = join(dir, 'link.jsonl');
    await symlink(join(dir, 'real.jsonl'), link);
    const pipe = await expectExit2(writeFileAtomic(fifo, 'x'));
    expect(pipe.toUserLine()).toContain(`Cannot write ${fifo}: it is not a regular file`);
    const linked = await expectExit2(openAtomicTextFile(link));
    expect(linked.toUserLine()).toContain(`Cannot write ${link}: it is a symbolic link`);
    await expectExit2(checkWritableOutput('/dev/null', '--report'));
    const header = createSnapshotHeader({
      tool: 't',
      source: { url: 'http://h', environment: 'e' },
      selection: { ids: null, types: null, name: null },
    });
    await expectExit2(writeSnapshot({ path: fifo }, header, []));
    expect((await lstat(fifo)).isFIFO()).toBe(true);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect((await readdir(dir)).sort()).toEqual(['link.jsonl', 'pipe.jsonl']);
  });
});

function auditRecord(caseId: string): CaseAuditRecord {
  return {
    event: 'matched',
    runId: 'r1',
    at: '2026-01-01T00:00:00.000Z',
    environment: 'prod',
    change: { field: 'status', newValue: 'resolved' },
    caseId,
    before: { status: 'open', note: 'n'.repeat(100) },
  };
}

describe('the audit trail stays whole lines (item 8)', () => {
  it('a torn last line left by a killed run is trimmed before the next append', async () => {
    const dir = await makeTempDir('dds-audit-');
    const path = join(dir, 'audit.jsonl');
    await appendAuditRecords(path, [auditRecord('c-1')]);
    const whole = await readFile(path, 'utf8');
    await writeFile(path, `${whole}{"event":"matched","runId":"r0","caseId":"c-`);
    await appendAuditRecords(path, [auditRecord('c-2')]);
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines.at(-1)).toBe('');
    const records = lines.slice(0, -1).map((l) => JSON.parse(l) as { caseId: string });
    expect(records.map((r) => r.caseId)).toEqual(['c-1', 'c-2']);
  });

  it('a file that is only a torn line becomes the new lines alone', async () => {
    const dir = await makeTempDir('dds-audit-');
    const path = join(dir, 'audit.jsonl');
    await writeFile(path, '{"event":"mat');
    await appendAuditRecords(path, [auditRecord('c-9')]);
    expect(await readFile(path, 'utf8')).toBe(`${JSON.stringify(auditRecord('c-9'))}\n`);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });
});

describe('temporary files of killed exports (item 9)', () => {
  const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid as number;

  it("removes a dead writer's .tmp and .spill of the same target, keeps a live writer's and other names", async () => {
    const dir = await makeTempDir('dds-stale-');
    const target = join(dir, 'prod.snapshot.jsonl');
    const dead = deadPid();
    const stale = [
      `.prod.snapshot.jsonl.${dead}-0123abcd.tmp`,
      `.prod.snapshot.jsonl.${dead}-89abcdef.spill`,
    ];
    // process.ppid: alive for the whole test, and not this process.
    const live = `.prod.snapshot.jsonl.${process.ppid}-00112233.spill`;
    const others = [`.other.jsonl.${dead}-0123abcd.tmp`, `.prod.snapshot.jsonl.${dead}-zz.tmp`, 'notes.txt'];
    for (const name of [...stale, live, ...others]) await writeFile(join(dir, name), 'secret');
    const removed = await removeStaleTempFiles(target, ['tmp', 'spill']);
    expect(removed.sort()).toEqual([...stale].sort());
    expect((await readdir(dir)).sort()).toEqual([live, ...others].sort());
  });

  it('removes a file of a live pid once nobody has touched it for a day (pid reuse)', async () => {
    const dir = await makeTempDir('dds-stale-');
    const target = join(dir, 'x.snapshot.jsonl');
    const old = join(dir, `.x.snapshot.jsonl.${process.ppid}-0a0b0c0d.tmp`);
    await writeFile(old, 'secret');
    const past = new Date(Date.now() - STALE_TEMP_AGE_MS - 60_000);
    await utimes(old, past, past);
    expect(await removeStaleTempFiles(target)).toEqual([`.x.snapshot.jsonl.${process.ppid}-0a0b0c0d.tmp`]);
  });

  it('writeSnapshot cleans its own target before writing (export after kills)', async () => {
    const dir = await makeTempDir('dds-stale-');
    const path = join(dir, 'p.snapshot.jsonl');
    const dead = deadPid();
    await writeFile(join(dir, `.p.snapshot.jsonl.${dead}-deadbeef.spill`), '{"password":"clear"}\n');
    const header = createSnapshotHeader({
      tool: 't',
      source: { url: 'http://h', environment: 'e' },
      selection: {
        ids: null,
        types: null,
        name: null,
      },
    });
    await writeSnapshot({ path }, header, [{ name: 'a', type: 's3' } as Connection]);
    expect(await readdir(dir)).toEqual(['p.snapshot.jsonl']);
  });

  it('--out-dir: a failed run removes the DIR/<env> folder it created (empty)', async () => {
    const dir = await makeTempDir('dds-outdir-');
    const outDir = join(dir, 'backups');
    const header = createSnapshotHeader({
      tool: 't',
      source: { url: 'http://h', environment: 'e' },
      selection: {
        ids: null,
        types: null,
        name: null,
      },
    });
    async function* failing(): AsyncGenerator<Connection> {
      yield { name: 'a', type: 's3' } as Connection;
      throw new UsageError('the service went away');
    }
    await expect(writeSnapshot({ outDir, environment: 'prod' }, header, failing())).rejects.toThrow(
      'the service went away',
    );
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('what is not a failed write', () => {
  it("writeSnapshot: an error of the entries' source stays its own, even with an errno code", async () => {
    const dir = await makeTempDir('dds-source-error-');
    const header = createSnapshotHeader({
      tool: 't',
      source: { url: 'http://h', environment: 'e' },
      selection: { ids: null, types: null, name: null },
    });
    const failure = Object.assign(new Error('read EIO'), { code: 'EIO', syscall: 'read' });
    async function* failing(): AsyncGenerator<Connection> {
      yield { name: 'a', type: 's3' } as Connection;
      throw failure;
    }
    const error = await writeSnapshot({ path: join(dir, 's.jsonl') }, header, failing()).catch((e) => e);
    expect(error).toBe(failure);
  });
});

/** An overrides document checked as `loadOverrides` checks the file it read. */
const parseOverrides = (text: string, file: string) => checkOverrides(JSON.parse(text), file);

describe('overrides (item 4)', () => {
  it('refuses an unterminated ${env:NAME (exit 2, naming the pointer, not the value)', async () => {
    const text = JSON.stringify({ byName: { db: { password: 'pre-${env:DB_PW' } } });
    const error = await expectExit2(parseOverrides(text, 'o.json'));
    expect(error).toBeInstanceOf(InputFileError);
    expect(error.message).toBe('o.json: /byName/db/password: malformed ${env:NAME} placeholder');
  });

  it.each([['${env:}'], ['${env:1ABC}'], ['${env:A-B}'], ['ok ${env:A} then ${env:B']])(
    'refuses the malformed placeholder in %j',
    async (value) => {
      await expectExit2(parseOverrides(JSON.stringify({ all: { x: [{ y: value }] } }), 'o.json'));
    },
  );

  it('accepts well-formed placeholders and text around them', async () => {
    const o = await parseOverrides(
      JSON.stringify({ all: { x: 'a ${env:A_1} b ${env:_B}', y: '$env' } }),
      'o',
    );
    expect(o.all.x).toBe('a ${env:A_1} b ${env:_B}');
  });

  it('refuses overrides nested 5000 deep with one clear line (was a stack overflow, exit 70)', async () => {
    const text = `{"all":{"x":${'['.repeat(5000)}${']'.repeat(5000)}}}`;
    const error = await expectExit2(parseOverrides(text, 'deep.json'));
    expect(error.message).toMatch(new RegExp(`^deep.json: nested deeper than ${MAX_OVERRIDES_DEPTH} levels`));
  });
});

describe('numeric flags use the config schema ranges (item 10)', () => {
  it('--concurrency 1e6 and --rate 1e-7 are refused with the range', () => {
    expect(() => checkNumberOption(1_000_000, 'concurrency', CONCURRENCY_RANGE)).toThrow(
      'Expected --concurrency to be an integer from 1 to 64, got 1000000',
    );
    expect(() => checkNumberOption(1e-7, 'rate', RATE_RANGE, '1e-7')).toThrow(
      'Expected --rate to be a number of requests per second >= 0.001, got 1e-7',
    );
    expect(checkNumberOption(64, 'concurrency', CONCURRENCY_RANGE)).toBe(64);
    expect(checkNumberOption(0.001, 'rate', RATE_RANGE)).toBe(0.001);
  });

  it('the ranges are those of schemas/config.schema.json', async () => {
    const schema = JSON.parse(await readFile(join(schemasDir(), 'config.schema.json'), 'utf8'));
    const env = findProperties(schema, 'concurrency');
    expect(env.concurrency).toMatchObject({
      type: 'integer',
      minimum: CONCURRENCY_RANGE.min,
      maximum: CONCURRENCY_RANGE.max,
    });
    expect(env.rate).toMatchObject({ type: 'number', minimum: RATE_RANGE.min });
    expect(env.rate?.maximum).toBe(RATE_RANGE.max);
    expect(env.rate?.exclusiveMinimum).toBeUndefined();
  });
});

/** The `properties` object of the schema that declares `key`. */
function findProperties(node: unknown, key: string): Record<string, Record<string, unknown>> {
  if (node !== null && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    const props = o.properties as Record<string, Record<string, unknown>> | undefined;
    if (props && key in props) return props;
    for (const v of Object.values(o)) {
      try {
        return findProperties(v, key);
      } catch {
        // not in this branch
      }
    }
  }
  throw new Error(`no properties with ${key}`);
}

describe('diff: a side holding two connections of one name (item 12)', () => {
  const c = (name: string, extra: Record<string, unknown> = {}) =>
    ({ name, type: 's3', ...extra }) as Connection;
  it('refuses it naming the name and the side (was: one kept silently)', () => {
    expect(() => diffConnections([c('a'), c('b'), c('a', { x: 1 })], [c('a')])).toThrow(
      'The --from side holds more than one connection named "a"',
    );
    expect(() => diffConnections([c('a')], [c('z'), c('z')])).toThrow(/The --to side .* named "z"/);
    expect(() => diffConnections([c('a')], [c('z'), c('z')])).toThrow(UsageError);
  });
});

describe('openAtomicTextFile', () => {
  it('writes every byte in order when the system writes only part of a writev', async () => {
    const dir = await makeTempDir('dds-migrate-atomic-');
    const path = join(dir, 'out.ndjson');
    const file = await openAtomicTextFile(path);
    // The handle's class: every writev of this test writes only its first 1000 bytes.
    const probe = await open(join(dir, 'probe'), 'w');
    const proto = Object.getPrototypeOf(probe) as {
      writev: (buffers: Buffer[]) => Promise<{ bytesWritten: number }>;
    };
    await probe.close();
    const writev = proto.writev;
    let shortWrites = 0;
    proto.writev = async function (this: unknown, buffers: Buffer[]) {
      shortWrites += 1;
      const first = Buffer.concat(buffers).subarray(0, 1000);
      return writev.call(this, [first]);
    };
    const expected: string[] = [];
    try {
      for (let page = 0; page < 5; page++) {
        for (let i = 0; i < 2000; i++) {
          const line = `{"page":${page},"i":${i}}\n`;
          expected.push(line);
          file.write(line);
        }
        if (file.needsDrain) await file.drain();
      }
      await file.commit();
    } finally {
      proto.writev = writev;
    }
    expect(shortWrites).toBeGreaterThan(1);
    expect(await readFile(path, 'utf8')).toBe(expected.join(''));
  });
});
