import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { link, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { InputFileError, PreflightError } from '../../src/errors.js';
import type { Connection } from '../../src/model/connection.js';
import { schemasDir } from '../../src/paths.js';
import { compileSchemaFile } from '../../src/schema/ajv.js';
import { hashEntryLines } from '../../src/snapshot/checksum.js';
import { canonicalizeEntry, createSnapshotHeader, serializeEntryLine } from '../../src/snapshot/format.js';
import {
  type EntryPlace,
  indexSnapshot,
  loadSnapshot,
  readSnapshotEntries,
  scanSnapshot,
  verifySnapshot,
} from '../../src/snapshot/read.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir('dds-snap-');
});

const header = createSnapshotHeader({
  tool: 'dds-migrate 0.1.0',
  source: { url: 'https://prod.example.com', environment: 'prod' },
  selection: { types: ['s3'] },
  createdAt: new Date('2026-11-22T10:00:00.000Z'),
});

function sample(): Connection[] {
  return [
    { type: 's3', name: 'zeta', _id: '65a100000000000000000003', enabled: 'yes', bucket_name: 'z-bucket' },
    {
      name: 'Alpha',
      _id: '65a100000000000000000001',
      type: 'snowflake',
      security_tier: '1',
      nested: { b: 1, a: [{ y: 2, x: 1 }] },
    },
    { _id: '65a100000000000000000002', name: 'alpha', type: 'rdb-mysql', enabled: true, password: '******' },
  ];
}

describe('writeSnapshot + readers: round trip', () => {
  it('writes header, entries sorted by name in code-unit order with stable keys, and a checked trailer', async () => {
    const path = join(dir, 'a.snapshot.jsonl');
    const written = await writeSnapshot({ path }, header, sample());
    expect(written.entryCount).toBe(3);
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(lines.at(-1)).toBe('');
    expect(JSON.parse(lines[0] as string)).toEqual(header);
    expect(Object.keys(JSON.parse(lines[0] as string))).toEqual([
      'kind',
      'formatVersion',
      'createdAt',
      'tool',
      'source',
      'selection',
      'include',
    ]);
    const entryLines = lines.slice(1, -2);
    // 'A' (0x41) < 'a' (0x61) < 'z': plain code-unit order, not locale order.
    expect(entryLines.map((l) => JSON.parse(l).name)).toEqual(['Alpha', 'alpha', 'zeta']);
    expect(entryLines[0]).toBe(
      '{"_id":"65a100000000000000000001","name":"Alpha","type":"snowflake","nested":{"a":[{"x":1,"y":2}],"b":1},"security_tier":"1"}',
    );
    const trailer = JSON.parse(lines.at(-2) as string);
    expect(trailer).toEqual({
      kind: 'dds-migrate/snapshot-end',
      entryCount: 3,
      connectionCount: 3,
      scanProfileCount: 0,
      sha256: hashEntryLines(entryLines),
    });
    expect(written.sha256).toBe(trailer.sha256);
    const checkHeader = await compileSchemaFile(join(schemasDir(), 'snapshot-header.schema.json'));
    const checkTrailer = await compileSchemaFile(join(schemasDir(), 'snapshot-trailer.schema.json'));
    expect(checkHeader(JSON.parse(lines[0] as string))).toEqual([]);
    expect(checkTrailer(trailer)).toEqual([]);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('reads back every entry verbatim (values untouched, "yes" stays a string)', async () => {
    const path = join(dir, 'a.snapshot.jsonl');
    await writeSnapshot({ path }, header, sample());
    const loaded = await loadSnapshot(path);
    expect(loaded.header).toEqual(header);
    const expected = sample()
      .map((e) => canonicalizeEntry(e))
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    expect(loaded.entries).toEqual(expected);
    const verified = await verifySnapshot(path);
    expect(verified.entryCount).toBe(3);
    expect(Object.fromEntries(verified.typeCounts)).toEqual({ snowflake: 1, 'rdb-mysql': 1, s3: 1 });
  });

  it('writes an empty snapshot with the sha256 of nothing', async () => {
    const path = join(dir, 'empty.snapshot.jsonl');
    const written = await writeSnapshot({ path }, header, []);
    expect(written.sha256).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect((await loadSnapshot(path)).entries).toEqual([]);
  });

  it('accepts an async iterable and reads with tiny chunks (lines cross chunk boundaries)', async () => {
    async function* gen(): AsyncGenerator<Connection> {
      for (let i = 0; i < 200; i++) yield { name: `n-${(i * 7919) % 200}`, type: 's3', v: 'é'.repeat(i % 5) };
    }
    const path = join(dir, 'big.snapshot.jsonl');
    await writeSnapshot({ path }, header, gen());
    const names: string[] = [];
    const verified = await scanSnapshot(path, (e) => names.push(e.name), { chunkSize: 7 });
    expect(verified.entryCount).toBe(200);
    expect(names).toEqual([...names].sort());
    const again: string[] = [];
    for await (const e of readSnapshotEntries(path, { chunkSize: 13, expected: verified }))
      again.push(e.name);
    expect(again).toEqual(names);
  });

  it('-o replaces an existing file atomically; no temporary file is left behind', async () => {
    const path = join(dir, 'a.snapshot.jsonl');
    await writeFile(path, 'old content', { mode: 0o644 });
    await writeSnapshot({ path }, header, sample());
    expect((await verifySnapshot(path)).entryCount).toBe(3);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(dir)).toEqual(['a.snapshot.jsonl']);
  });

  it('--out-dir writes DIR/<environment>/<timestamp>.snapshot.jsonl and never overwrites', async () => {
    const first = await writeSnapshot({ outDir: dir, environment: 'prod' }, header, sample());
    expect(first.path).toBe(join(dir, 'prod', '2026-11-22T10-00-00.000Z.snapshot.jsonl'));
    const before = await readFile(first.path, 'utf8');
    const second = await writeSnapshot({ outDir: dir, environment: 'prod' }, header, sample().slice(0, 1));
    expect(second.path).toBe(join(dir, 'prod', '2026-11-22T10-00-00.000Z-2.snapshot.jsonl'));
    expect(await readFile(first.path, 'utf8')).toBe(before);
    expect((await verifySnapshot(second.path)).entryCount).toBe(1);
    expect((await readdir(join(dir, 'prod'))).sort()).toEqual([
      '2026-11-22T10-00-00.000Z-2.snapshot.jsonl',
      '2026-11-22T10-00-00.000Z.snapshot.jsonl',
    ]);
  });

  it('--out-dir makes a host:port environment name filesystem-safe', async () => {
    const written = await writeSnapshot({ outDir: dir, environment: '127.0.0.1:4010' }, header, []);
    expect(written.path).toBe(join(dir, '127.0.0.1_4010', '2026-11-22T10-00-00.000Z.snapshot.jsonl'));
  });

  it('refuses duplicate names in the export and leaves no file', async () => {
    const path = join(dir, 'dup.snapshot.jsonl');
    const entries = [...sample(), { name: 'zeta', type: 'smb' }];
    const error = await writeSnapshot({ path }, header, entries).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PreflightError);
    expect((error as PreflightError).problems).toEqual([{ entry: 'zeta', message: expect.any(String) }]);
    expect(await readdir(dir)).toEqual([]);
  });

  it('refuses an entry without a string name or type', async () => {
    const path = join(dir, 'bad.snapshot.jsonl');
    const error = await writeSnapshot({ path }, header, [{ name: 'x' } as unknown as Connection]).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PreflightError);
    expect(await readdir(dir)).toEqual([]);
  });

  it('stops when the signal is aborted and removes its temporary files', async () => {
    const controller = new AbortController();
    async function* gen(): AsyncGenerator<Connection> {
      yield { name: 'a', type: 's3' };
      controller.abort();
      yield { name: 'b', type: 's3' };
    }
    const path = join(dir, 'x.snapshot.jsonl');
    await expect(writeSnapshot({ path }, header, gen(), { signal: controller.signal })).rejects.toMatchObject(
      {
        exitCode: 130,
      },
    );
    expect(await readdir(dir)).toEqual([]);
  });

  it('-o into a missing folder is a usage error before anything is read', async () => {
    let pulled = false;
    function* gen(): Generator<Connection> {
      pulled = true;
      yield { name: 'a', type: 's3' };
    }
    await expect(writeSnapshot({ path: join(dir, 'no', 'x.jsonl') }, header, gen())).rejects.toMatchObject({
      exitCode: 2,
    });
    expect(pulled).toBe(false);
  });
});

describe('canonicalizeEntry', () => {
  it('puts _id, name, type first, the rest in code-unit order, and keeps __proto__ as a plain key', () => {
    const parsed = JSON.parse('{"b":1,"__proto__":{"z":1},"type":"s3","a":2,"name":"n","_id":"i","B":3}');
    const line = serializeEntryLine(parsed);
    expect(line).toBe('{"_id":"i","name":"n","type":"s3","B":3,"__proto__":{"z":1},"a":2,"b":1}');
    expect(Object.getPrototypeOf(canonicalizeEntry(parsed))).toBe(Object.prototype);
  });
});

// ---- refusals -------------------------------------------------------------------------------------

/** Write a valid snapshot of `sample()` and return its lines (with a final empty string). */
async function validLines(): Promise<{ path: string; lines: string[] }> {
  const path = join(dir, 'v.snapshot.jsonl');
  await writeSnapshot({ path }, header, sample());
  return { path, lines: (await readFile(path, 'utf8')).split('\n') };
}

async function refusal(text: string): Promise<InputFileError> {
  const path = join(dir, 'bad.snapshot.jsonl');
  await writeFile(path, text);
  const error = await verifySnapshot(path).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(InputFileError);
  expect((error as InputFileError).exitCode).toBe(2);
  // The streaming reader refuses the same way.
  const viaRead = await (async () => {
    for await (const _ of readSnapshotEntries(path)) {
      // drain
    }
  })().catch((e: unknown) => e);
  expect(viaRead).toBeInstanceOf(InputFileError);
  expect((viaRead as InputFileError).line).toBe((error as InputFileError).line);
  return error as InputFileError;
}

function withTrailer(headerLine: string, entryLines: string[], trailer?: object): string {
  const t = trailer ?? {
    kind: 'dds-migrate/snapshot-end',
    entryCount: entryLines.length,
    connectionCount: entryLines.length,
    scanProfileCount: 0,
    sha256: hashEntryLines(entryLines),
  };
  return `${[headerLine, ...entryLines, JSON.stringify(t)].join('\n')}\n`;
}

describe('verifySnapshot refuses, naming the line', () => {
  it('an empty file', async () => {
    const e = await refusal('');
    expect(e.message).toMatch(/empty/);
  });

  it('a truncated file (no trailer)', async () => {
    const { lines } = await validLines();
    const e = await refusal(`${lines.slice(0, 3).join('\n')}\n`);
    expect(e.line).toBe(4);
    expect(e.message).toMatch(/bad\.snapshot\.jsonl:4: .*truncated/);
  });

  it('a file cut in the middle of a line', async () => {
    const { lines } = await validLines();
    const text = lines.join('\n');
    const e = await refusal(text.slice(0, text.indexOf(lines[2] as string) + 10));
    expect(e.line).toBe(3);
  });

  it('a trailer without its final newline', async () => {
    const { lines } = await validLines();
    const e = await refusal(lines.join('\n').slice(0, -1));
    expect(e.line).toBe(5);
    expect(e.message).toMatch(/truncated/);
  });

  it('a wrong sha256', async () => {
    const { lines } = await validLines();
    const trailer = JSON.parse(lines[4] as string);
    trailer.sha256 = '0'.repeat(64);
    const e = await refusal(withTrailer(lines[0] as string, lines.slice(1, 4), trailer));
    expect(e.line).toBe(5);
    expect(e.message).toMatch(/sha256/);
  });

  it('an edited entry (sha256 no longer matches)', async () => {
    const { lines } = await validLines();
    const edited = [...lines];
    edited[2] = (edited[2] as string).replace('"rdb-mysql"', '"rdb-mssql"');
    const e = await refusal(edited.join('\n'));
    expect(e.line).toBe(5);
  });

  it('a wrong entryCount', async () => {
    const { lines } = await validLines();
    const trailer = JSON.parse(lines[4] as string);
    trailer.entryCount = 4;
    const e = await refusal(withTrailer(lines[0] as string, lines.slice(1, 4), trailer));
    expect(e.line).toBe(5);
    expect(e.message).toMatch(/4 entries but the snapshot holds 3/);
  });

  it('a line that is not JSON, without quoting the line (it may hold a secret)', async () => {
    const { lines } = await validLines();
    const bad = [...lines];
    bad[2] = '{"name":"alpha","password":"hunter2-secret", oops}';
    const e = await refusal(bad.join('\n'));
    expect(e.line).toBe(3);
    expect(e.message).toMatch(/bad\.snapshot\.jsonl:3: not valid JSON \(/);
    expect(e.toUserLine()).toMatch(/the snapshot is damaged: export it again/i);
    expect(e.toUserLine()).not.toContain('hunter2');
  });

  it('formatVersion 99', async () => {
    const { lines } = await validLines();
    const h = JSON.parse(lines[0] as string);
    h.formatVersion = 99;
    const e = await refusal([JSON.stringify(h), ...lines.slice(1)].join('\n'));
    expect(e.line).toBe(1);
    expect(e.message).toMatch(/formatVersion 99 is newer/);
    expect(e.hint).toMatch(/Upgrade/);
  });

  it('a wrong kind', async () => {
    const { lines } = await validLines();
    const h = JSON.parse(lines[0] as string);
    h.kind = 'something-else';
    const e = await refusal([JSON.stringify(h), ...lines.slice(1)].join('\n'));
    expect(e.line).toBe(1);
    expect(e.message).toMatch(/kind is "something-else"/);
  });

  it('a plain export (a JSON array) instead of a snapshot', async () => {
    const e = await refusal('[\n  {"name":"a","type":"s3"}\n]\n');
    expect(e.line).toBe(1);
    expect(e.message).toMatch(/not a dds-migrate snapshot/);
  });

  it('a duplicate name', async () => {
    const { lines } = await validLines();
    const entries = [lines[1] as string, lines[2] as string, lines[2] as string, lines[3] as string];
    const e = await refusal(withTrailer(lines[0] as string, entries));
    expect(e.line).toBe(4);
    expect(e.message).toMatch(/duplicate name "alpha" \(also on line 3\)/);
  });

  it('entries out of name order', async () => {
    const { lines } = await validLines();
    const entries = [lines[2] as string, lines[1] as string, lines[3] as string];
    const e = await refusal(withTrailer(lines[0] as string, entries));
    expect(e.line).toBe(3);
    expect(e.message).toMatch(/not sorted/);
  });

  it('an entry without a string name or type', async () => {
    const { lines } = await validLines();
    const e1 = await refusal(withTrailer(lines[0] as string, ['{"type":"s3"}']));
    expect(e1.line).toBe(2);
    expect(e1.message).toMatch(/name/);
    const e2 = await refusal(withTrailer(lines[0] as string, ['{"name":"a","type":7}']));
    expect(e2.message).toMatch(/type/);
    const e3 = await refusal(withTrailer(lines[0] as string, ['["a"]']));
    expect(e3.message).toMatch(/not a JSON object/);
  });

  it('anything after the trailer, even an empty line', async () => {
    const { lines } = await validLines();
    const e = await refusal(`${lines.join('\n')}\n`);
    expect(e.line).toBe(6);
    expect(e.message).toMatch(/after the trailer/);
  });

  it('a header of the wrong shape', async () => {
    const { lines } = await validLines();
    const h = JSON.parse(lines[0] as string);
    h.source = 'prod';
    const e = await refusal([JSON.stringify(h), ...lines.slice(1)].join('\n'));
    expect(e.line).toBe(1);
    expect(e.message).toMatch(/source/);
  });

  it('a missing file', async () => {
    const error = await verifySnapshot(join(dir, 'nope.jsonl')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as InputFileError).message).toMatch(/no such file/);
  });

  it('a file that changed between verify and read', async () => {
    const { path } = await validLines();
    const verified = await verifySnapshot(path);
    const other = join(dir, 'other.snapshot.jsonl');
    await writeSnapshot({ path: other }, header, sample().slice(0, 2));
    await rm(path);
    await link(other, path);
    const error = await (async () => {
      for await (const _ of readSnapshotEntries(path, { expected: verified })) {
        // drain
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as InputFileError).message).toMatch(/changed/);
  });
});

describe('indexSnapshot', () => {
  it('hands out each entry with its place, reads it again by place, and refuses a line changed since', async () => {
    const dir = await makeTempDir('placed-');
    const path = join(dir, 'placed.snapshot.jsonl');
    const entries: Connection[] = Array.from({ length: 300 }, (_, i) => ({
      name: `n${String(i).padStart(4, '0')}`,
      type: 's3',
      description: 'x'.repeat(i * 7),
    }));
    await writeSnapshot(
      { path },
      createSnapshotHeader({ tool: 't', source: { url: 'https://a.invalid', environment: 'a' } }),
      entries,
    );
    // Small chunks: lines span chunk boundaries.
    const places: EntryPlace[] = [];
    const { file: snapshot } = await indexSnapshot(
      path,
      ({ entry, place }, file) => {
        places.push(place);
        expect(file.reread(place)).toEqual(entry);
      },
      { chunkSize: 64 },
    );
    expect(places).toHaveLength(300);
    expect(snapshot.reread(places[123] as EntryPlace)).toEqual(entries[123]);
    const text = readFileSync(path, 'utf8');
    writeFileSync(path, text.replace('"n0123"', '"m0123"'));
    expect(() => snapshot.reread(places[123] as EntryPlace)).toThrow(/changed while it was being read/);
    snapshot.close();
    expect(() => snapshot.reread(places[0] as EntryPlace)).toThrow();
  });

  it('a file gone before its first reread is a file error naming it (exit 2), not a bug', async () => {
    const dir = await makeTempDir('placed-gone-');
    const path = join(dir, 'gone.snapshot.jsonl');
    await writeSnapshot(
      { path },
      createSnapshotHeader({ tool: 't', source: { url: 'https://a.invalid', environment: 'a' } }),
      [{ name: 'a', type: 's3' }],
    );
    const places: EntryPlace[] = [];
    const { file: snapshot } = await indexSnapshot(path, ({ place }) => places.push(place), {
      label: 'gone.snapshot.jsonl',
    });
    rmSync(path);
    try {
      snapshot.reread(places[0] as EntryPlace);
      expect.unreachable('reread of a deleted file');
    } catch (error) {
      expect(error).toBeInstanceOf(InputFileError);
      expect((error as InputFileError).message).toBe(
        'gone.snapshot.jsonl:2: the snapshot was removed while it was being read',
      );
      expect((error as InputFileError).hint).toMatch(/Keep the file in place/);
    } finally {
      snapshot.close();
    }
  });
});
