/**
 * Shared set-up of the end-to-end tests that run the CLI against emulators seeded from
 * `fixtures/environments/prod.json`: the seed loaded once per test file, a temporary folder per file,
 * and every emulator a test starts closed when that test ends (pass or fail).
 */
import { join } from 'node:path';
import { afterEach, beforeAll } from 'vitest';
import {
  type EmulatorOptions,
  type EmulatorSeed,
  loadSeed,
  type RunningEmulator,
  startEmulator,
} from '../../src/emulator/index.js';
import { fixturesDir } from '../../src/paths.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** What {@link useProdE2e} provides; `prod` and `dir` are ready once the file's tests run. */
export interface ProdE2e {
  /** The prod fixture's seed. */
  readonly prod: EmulatorSeed;
  /** A temporary folder for the file's tests, removed when the file ends. */
  readonly dir: string;
  /** Start an emulator on a free loopback port (unless `options` says otherwise), closed after the test. */
  start(options: EmulatorOptions): Promise<RunningEmulator>;
}

/** Register the hooks of a test file (call it at the file's top level); `tempPrefix` names its folder. */
export function useProdE2e(tempPrefix: string): ProdE2e {
  let prod: EmulatorSeed | undefined;
  let dir: string | undefined;
  const started: RunningEmulator[] = [];

  beforeAll(async () => {
    prod = await loadSeed(join(fixturesDir(), 'environments', 'prod.json'));
    dir = await makeTempDir(tempPrefix);
  });

  afterEach(async () => {
    await Promise.all(started.splice(0).map((e) => e.close()));
  });

  return {
    get prod() {
      if (prod === undefined)
        throw new Error('useProdE2e: the prod seed is read in beforeAll, use it in a test');
      return prod;
    },
    get dir() {
      if (dir === undefined) throw new Error('useProdE2e: the folder is made in beforeAll, use it in a test');
      return dir;
    },
    async start(options) {
      const emu = await startEmulator({ port: 0, ...options });
      started.push(emu);
      return emu;
    },
  };
}
