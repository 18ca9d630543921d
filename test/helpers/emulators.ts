/**
 * Emulators a test file starts and that are closed after each of its tests: call at the file's top level.
 */
import { afterEach } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import type { EmulatorOptions } from '../../src/emulator/types.js';

/** A starter of emulators (on a free port, `defaults` then the call's options), each closed after its test. */
export function emulatorsClosedAfterEach(
  defaults: EmulatorOptions = {},
): (options: EmulatorOptions) => Promise<RunningEmulator> {
  const started: RunningEmulator[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((e) => e.close()));
  });
  return async (options) => {
    const emu = await startEmulator({ port: 0, ...defaults, ...options });
    started.push(emu);
    return emu;
  };
}
