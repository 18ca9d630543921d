import { InputFileError } from '../errors.js';
import { readJsonFile } from '../files.js';
import { isRecord } from '../own-property.js';
import type { IdMap, IdMapEntry } from './plan.js';

/** Check a parsed id map (contract section 3); `file` names it in messages. */
export function parseIdMap(value: unknown, file: string): IdMap {
  const bad = (message: string) => new InputFileError(file, undefined, message);
  if (!isRecord(value)) throw bad('expected an id map object { "<source _id>": { "name", "targetId" } }');
  const map = new Map<string, IdMapEntry>();
  for (const [sourceId, e] of Object.entries(value)) {
    if (!isRecord(e) || typeof e.name !== 'string' || e.name === '')
      throw bad(`/${sourceId}: expected { "name": string, "targetId": string }`);
    // An entry without a target id (a failed create) still maps by name.
    if (e.targetId !== undefined && e.targetId !== null && typeof e.targetId !== 'string')
      throw bad(`/${sourceId}/targetId: expected a string`);
    map.set(sourceId, {
      name: e.name,
      targetId: typeof e.targetId === 'string' && e.targetId !== '' ? e.targetId : undefined,
    });
  }
  return map;
}

/** Read an id map file (`--id-map`); a missing or malformed file is an {@link InputFileError} (exit 2). */
export async function readIdMap(file: string): Promise<IdMap> {
  const value = await readJsonFile(file, {
    what: 'id map',
    readHint: 'Pass the --id-map file written by `import --id-map`',
  });
  return parseIdMap(value, file);
}
