/** The environments shipped in `fixtures/environments/`, which `emulator --data NAME` serves by name. */
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { fixturesDir } from '../paths.js';

function listShippedEnvironments(): string[] {
  try {
    return readdirSync(join(fixturesDir(), 'environments'))
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -'.json'.length))
      .sort();
  } catch {
    return [];
  }
}

/** `--data`: a seed file (relative to `cwd`; wins), else a shipped environment's name (works outside the clone). */
export function resolveDataOption(data: string, cwd: string): string {
  const direct = resolve(cwd, data);
  if (existsSync(direct)) return direct;
  const shipped = listShippedEnvironments();
  if (shipped.includes(data)) return join(fixturesDir(), 'environments', `${data}.json`);
  throw new UsageError(
    `Expected --data to name a seed file or a shipped environment, but ${direct} does not exist`,
    {
      hint: `Shipped environments: ${shipped.join(', ') || 'none found'}`,
    },
  );
}
