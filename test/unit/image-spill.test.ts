/**
 * Before-images kept out of memory (`src/importer/image-spill.ts`): written to a file of the run's own
 * beside the journal in blocks, read back whole by place, scrubbed, the file 0600, created exclusively
 * and removed when the run ends (never throwing); files that killed runs left are removed by the next.
 */
import { existsSync, readdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileWriteError } from '../../src/errors.js';
import { DROP_IMAGES, removeLeftImages, spillImages } from '../../src/importer/image-spill.js';
import { clearRegisteredSecrets, registerSecret } from '../../src/secrets.js';
import { type FullDisk, mountFullDisk } from '../helpers/full-disk.js';
import { makeTempDirSync } from '../helpers/temp-dir.js';

const disk = mountFullDisk();
const noDisk = typeof disk === 'string' ? disk : undefined;
afterAll(() => {
  if (typeof disk !== 'string') disk.unmount();
  clearRegisteredSecrets();
});

/** The images files in `dir`. */
const imagesFiles = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.images.tmp'));

describe('spillImages', () => {
  it('hands every image back as kept, before and after its block is written, from its own 0600 file removed on close', () => {
    const dir = makeTempDirSync('dds-spill-');
    const journal = join(dir, 'run.journal.jsonl');
    const store = spillImages(journal);
    // About 3 MB of images: several blocks, and the last one still in memory when read.
    const images = Array.from({ length: 3000 }, (_, i) => ({
      name: `conn-${i}`,
      type: 'rdb-mysql',
      description: `é ${'x'.repeat(i % 2000)}`,
      password: '******',
      nested: { list: [i, String(i), null, true] },
    }));
    const kept = images.map((image) => store.keep(image));
    const [file] = imagesFiles(dir);
    expect(file).toMatch(/^run\.journal\.jsonl\.\d+-[0-9a-f]{8}\.images\.tmp$/);
    expect(statSync(join(dir, file as string)).mode & 0o777).toBe(0o600);
    // Read back out of order, the last ones from the block not written yet.
    for (const i of [2999, 0, 1500, 2998, 1]) expect(kept[i]?.load()).toEqual(images[i]);
    expect(kept.map((source) => source.load())).toEqual(images);
    store.close();
    expect(imagesFiles(dir)).toEqual([]);
    // Closed: nothing more is kept or written, and closing again is harmless.
    store.keep({ name: 'late', pad: 'x'.repeat(2_000_000) });
    store.close();
    expect(imagesFiles(dir)).toEqual([]);
  });

  it('writes no file until it must; two runs of one journal never share one', () => {
    const dir = makeTempDirSync('dds-spill-');
    const journal = join(dir, 'j.jsonl');
    const untouched = spillImages(journal);
    expect(untouched.keep({ name: 'a' }).load()).toEqual({ name: 'a' });
    const other = spillImages(journal);
    other.keep({ name: 'b' }).load();
    expect(imagesFiles(dir)).toHaveLength(2);
    untouched.close();
    other.close();
    expect(imagesFiles(dir)).toEqual([]);
  });

  it('closing never throws, even when the file is gone already', () => {
    const dir = makeTempDirSync('dds-spill-');
    const store = spillImages(join(dir, 'j.jsonl'));
    store.keep({ name: 'a' }).load();
    for (const name of imagesFiles(dir)) unlinkSync(join(dir, name));
    expect(() => store.close()).not.toThrow();
  });

  it('scrubs what it writes, as the journal does: a known secret the service echoed stays out of the file', () => {
    const dir = makeTempDirSync('dds-spill-');
    registerSecret('echoed-clear-value-123');
    const store = spillImages(join(dir, 'j.jsonl'));
    const kept = store.keep({ name: 'a', note: 'echoed-clear-value-123' });
    expect(kept.load()).toEqual({ name: 'a', note: '******' });
    const text = readFileSync(join(dir, imagesFiles(dir)[0] as string), 'utf8');
    expect(text).not.toContain('echoed-clear-value-123');
    store.close();
  });

  it('removeLeftImages removes what killed runs of this journal left, and nothing else', () => {
    const dir = makeTempDirSync('dds-spill-');
    const journal = join(dir, 'run.jsonl');
    const left = ['run.jsonl.123-deadbeef.images.tmp', 'run.jsonl.9-0badf00d.images.tmp'];
    const kept = [
      'run.jsonl',
      'run.jsonl.lock',
      'run.jsonl.b.jsonl.1-aaaaaaaa.images.tmp',
      'other.jsonl.123-deadbeef.images.tmp',
      'run.jsonl.images.tmp',
    ];
    for (const name of [...left, ...kept]) writeFileSync(join(dir, name), 'x');
    removeLeftImages(journal);
    expect(readdirSync(dir).sort()).toEqual([...kept].sort());
    expect(() => removeLeftImages(join(dir, 'missing', 'j.jsonl'))).not.toThrow();
  });

  it.skipIf(noDisk)('a full disk is a file error naming the file (exit 2), not a bug', () => {
    const store = spillImages(join((disk as FullDisk).dir, 'j.jsonl'));
    let error: unknown;
    try {
      for (let i = 0; i < 2000; i++) store.keep({ name: `c-${i}`, description: 'x'.repeat(1000) });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(FileWriteError);
    expect((error as FileWriteError).exitCode).toBe(2);
    expect((error as Error).message).toMatch(
      /j\.jsonl\.\d+-[0-9a-f]{8}\.images\.tmp: cannot write the before-images of the run \(ENOSPC\)/,
    );
    store.close();
    expect(existsSync((disk as FullDisk).dir) && imagesFiles((disk as FullDisk).dir)).toEqual([]);
  });

  it('a dry run keeps none: loading one is a bug, not a silent empty image', () => {
    expect(() => DROP_IMAGES.keep({ name: 'a' }).load()).toThrow(/dry run/);
  });
});
