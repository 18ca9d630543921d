/**
 * Before-images kept out of memory (`src/importer/image-spill.ts`): written beside the journal in
 * blocks, read back whole by place, the file 0600 and removed when the run ends.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FileWriteError } from '../../src/errors.js';
import { DROP_IMAGES, spillImages } from '../../src/importer/image-spill.js';
import { type FullDisk, mountFullDisk } from '../helpers/full-disk.js';
import { makeTempDirSync } from '../helpers/temp-dir.js';

const disk = mountFullDisk();
const noDisk = typeof disk === 'string' ? disk : undefined;
afterAll(() => {
  if (typeof disk !== 'string') disk.unmount();
});

describe('spillImages', () => {
  it('hands every image back as kept, before and after its block is written, from a 0600 file removed on close', () => {
    const dir = makeTempDirSync('dds-spill-');
    const path = join(dir, 'run.journal.jsonl.images.tmp');
    const store = spillImages(path);
    // About 3 MB of images: several blocks, and the last one still in memory when read.
    const images = Array.from({ length: 3000 }, (_, i) => ({
      name: `conn-${i}`,
      type: 'rdb-mysql',
      description: `é ${'x'.repeat(i % 2000)}`,
      password: '******',
      nested: { list: [i, String(i), null, true] },
    }));
    const kept = images.map((image) => store.keep(image));
    expect(existsSync(path)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    // Read back out of order, the last ones from the block not written yet.
    for (const i of [2999, 0, 1500, 2998, 1]) expect(kept[i]?.load()).toEqual(images[i]);
    expect(kept.map((source) => source.load())).toEqual(images);
    store.close();
    expect(existsSync(path)).toBe(false);
  });

  it('writes nothing until it must, and a file left by a killed run is started again', () => {
    const dir = makeTempDirSync('dds-spill-');
    const fresh = spillImages(join(dir, 'fresh.images.tmp'));
    expect(fresh.keep({ name: 'a' }).load()).toEqual({ name: 'a' });
    fresh.close();
    const untouched = spillImages(join(dir, 'untouched.images.tmp'));
    untouched.keep({ name: 'a' });
    expect(existsSync(join(dir, 'untouched.images.tmp'))).toBe(false);
    untouched.close();

    const path = join(dir, 'left.images.tmp');
    writeFileSync(path, 'x'.repeat(10_000));
    const store = spillImages(path);
    const kept = store.keep({ name: 'b', list: [1, 2] });
    expect(kept.load()).toEqual({ name: 'b', list: [1, 2] });
    expect(readFileSync(path, 'utf8')).toBe('{"name":"b","list":[1,2]}');
    store.close();
    expect(existsSync(path)).toBe(false);
  });

  it.skipIf(noDisk)('a full disk is a file error naming the file (exit 2), not a bug', () => {
    const store = spillImages(join((disk as FullDisk).dir, 'j.images.tmp'));
    let error: unknown;
    try {
      for (let i = 0; i < 2000; i++) store.keep({ name: `c-${i}`, description: 'x'.repeat(1000) });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(FileWriteError);
    expect((error as FileWriteError).exitCode).toBe(2);
    expect((error as Error).message).toMatch(
      /j\.images\.tmp: cannot write the before-images of the run \(ENOSPC\)/,
    );
    store.close();
  });

  it('a dry run keeps none: loading one is a bug, not a silent empty image', () => {
    expect(() => DROP_IMAGES.keep({ name: 'a' }).load()).toThrow(/dry run/);
  });
});
