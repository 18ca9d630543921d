/**
 * The emulator server's plumbing: the seed it starts from (a file, data, generated connections and
 * cases, a state file), a request's body and path, and its waits.
 */
import { existsSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { toMongoCases } from './deployment.js';
import { generateConnections } from './generate.js';
import { generateCases } from './generate-cases.js';
import { checkSeed, loadSeed } from './seed.js';
import type { EmulatorOptions, EmulatorSeed } from './types.js';

/** The seed the emulator starts from; `owned` when it may be adopted without a copy. */
export async function resolveSeed(options: EmulatorOptions): Promise<{ seed: EmulatorSeed; owned: boolean }> {
  if (options.statePath !== undefined && existsSync(options.statePath)) {
    return { seed: await loadSeed(options.statePath), owned: true };
  }
  let resolved: { seed: EmulatorSeed; owned: boolean } = { seed: {}, owned: true };
  if (typeof options.data === 'string') resolved = { seed: await loadSeed(options.data), owned: true };
  else if (options.data !== undefined) resolved = { seed: checkSeed(options.data, 'data'), owned: false };
  const n = options.generate ?? 0;
  if (n > 0) {
    const generated = generateConnections(n, { seed: 1 });
    const connections = [...(resolved.seed.connections ?? []), ...generated];
    // The caller's seed is not ours to change: a new outer object (the store copies the rest).
    resolved = { seed: { ...resolved.seed, connections }, owned: resolved.owned };
  }
  const m = options.generateCases ?? 0;
  if (m > 0) {
    const generated = generateCases(m, { seed: 1 });
    const existing = resolved.seed.cases ?? [];
    const cases = existing.length === 0 ? generated : [...existing, ...generated];
    resolved = { seed: { ...resolved.seed, cases }, owned: resolved.owned };
  }
  if (options.caseIds === 'mongo' && resolved.seed.cases !== undefined) {
    resolved = {
      seed: { ...resolved.seed, cases: toMongoCases(resolved.seed.cases) },
      owned: resolved.owned,
    };
  }
  return resolved;
}

export function readBody(req: IncomingMessage, maxBytes: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        resolve(null);
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Resolves at `due` (a `performance.now()` time), at once when it has passed. */
export function sleepUntil(due: number): Promise<void> | undefined {
  const ms = due - performance.now();
  return ms > 0 ? sleep(ms) : undefined;
}

export function decodeSegments(pathname: string): string[] | null {
  try {
    return pathname
      .split('/')
      .filter((s) => s !== '')
      .map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
}

export function checkNumber(
  name: string,
  value: number | undefined,
  min: number,
  integer = false,
  max = Number.POSITIVE_INFINITY,
): void {
  if (value === undefined) return;
  if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    const range = max === Number.POSITIVE_INFINITY ? `>= ${min}` : `from ${min} to ${max}`;
    throw new Error(`Expected ${name} to be ${integer ? 'an integer' : 'a number'} ${range}, got ${value}`);
  }
}

export function checkChoice(name: string, value: unknown, choices: readonly unknown[]): void {
  if (value === undefined || choices.includes(value)) return;
  throw new Error(`Expected ${name} to be one of ${choices.join(', ')}, got ${String(value)}`);
}
