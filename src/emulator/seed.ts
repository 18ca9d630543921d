/** Reading seed and state files (same format; see {@link EmulatorSeed}). */
import { readFile } from 'node:fs/promises';
import type { EmulatorSeed } from './types.js';

const ARRAY_KEYS = [
  'connections',
  'scanProfiles',
  'cases',
  'scanTemplates',
  'scansStarted',
  'caseAudit',
  'scanners',
  'credentials',
  'connectionTestFailures',
] as const;

/** Check the outline of a parsed seed; `source` names it in messages. */
export function checkSeed(value: unknown, source: string): EmulatorSeed {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(`${source}: expected a JSON object with connections, scanProfiles and cases arrays`);
  }
  const seed = value as Record<string, unknown>;
  for (const key of ARRAY_KEYS) {
    if (seed[key] !== undefined && !Array.isArray(seed[key]))
      throw new Error(`${source}: '${key}' must be an array`);
  }
  (seed.connections as unknown[] | undefined)?.forEach((c, i) => {
    const o = c as Record<string, unknown> | null;
    if (o === null || typeof o !== 'object' || typeof o.name !== 'string' || typeof o.type !== 'string') {
      throw new Error(`${source}: connections[${i}] needs a string name and type`);
    }
  });
  (seed.scanners as unknown[] | undefined)?.forEach((c, i) => {
    const o = c as Record<string, unknown> | null;
    if (
      o === null ||
      typeof o !== 'object' ||
      typeof o.name !== 'string' ||
      typeof o.scanner_group !== 'string'
    ) {
      throw new Error(`${source}: scanners[${i}] needs a string name and scanner_group`);
    }
  });
  (seed.credentials as unknown[] | undefined)?.forEach((c, i) => {
    const o = c as Record<string, unknown> | null;
    if (o === null || typeof o !== 'object' || typeof o.credential_id !== 'string') {
      throw new Error(`${source}: credentials[${i}] needs a string credential_id`);
    }
  });
  (seed.connectionTestFailures as unknown[] | undefined)?.forEach((c, i) => {
    if (typeof c !== 'string') throw new Error(`${source}: connectionTestFailures[${i}] must be a string`);
  });
  (seed.cases as unknown[] | undefined)?.forEach((c, i) => {
    const o = c as Record<string, unknown> | null;
    if (
      o === null ||
      typeof o !== 'object' ||
      (typeof o.id !== 'string' && typeof o.caseId !== 'string' && typeof o._id !== 'string')
    ) {
      throw new Error(`${source}: cases[${i}] needs a string _id, id or caseId`);
    }
  });
  return seed as EmulatorSeed;
}

/** Read and check a JSON seed file. */
export async function loadSeed(path: string): Promise<EmulatorSeed> {
  const text = await readFile(path, 'utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new Error(`${path}: not valid JSON (${(cause as Error).message})`, { cause });
  }
  return checkSeed(parsed, path);
}
