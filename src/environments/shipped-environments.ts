/** The environments shipped in `fixtures/environments/`, which `emulator --data NAME` serves by name. */
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { fixturesDir } from '../paths.js';

/** `--data`: a seed file (relative to `cwd`; wins), else a shipped environment (works outside the clone). */
export function resolveDataOption(data: string, cwd: string): string {
  const direct = resolve(cwd, data);
  if (existsSync(direct)) return direct;
  const folder = join(fixturesDir(), 'environments');
  let shipped: string[] = [];
  try {
    shipped = readdirSync(folder)
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -'.json'.length))
      .sort();
  } catch {
    // No readable folder (a package installed without it): no shipped environment to offer.
  }
  if (shipped.includes(data)) return join(folder, `${data}.json`);
  throw new UsageError(
    `Expected --data to name a seed file or a shipped environment, but ${direct} does not exist`,
    {
      hint: `Shipped environments: ${shipped.join(', ') || 'none found'}`,
    },
  );
}
