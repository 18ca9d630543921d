/**
 * The scan profile kind: how the executor writes a scan profile (`/scanProfiles`: created by POST,
 * replaced and deleted by id; api-notes [code] and [guess]). There is no look-up by name, so an
 * in-doubt create is found in the list of every profile.
 */
import type { HttpClient } from '../../api/http.js';
import {
  createScanProfile,
  deleteScanProfile,
  listScanProfiles,
  updateScanProfile,
} from '../../api/scan-profiles.js';
import { type KindWriter, StepRefused, type WriteTarget } from '../execute.js';

function idOf(target: WriteTarget): string {
  if (target.id === undefined) throw new StepRefused(`scan profile '${target.name}' has no id in the target`);
  return target.id;
}

/** The executor's writer of scan profiles, bound to `client`. */
export function scanProfileWriter(client: HttpClient): KindWriter {
  return {
    create: async (body) => (await createScanProfile(client, { ...body }))._id,
    update: async (target, body, signal) =>
      (await updateScanProfile(client, idOf(target), { ...body }, { signal })).kind === 'absent'
        ? 'absent'
        : 'applied',
    remove: async (target, signal) =>
      (await deleteScanProfile(client, idOf(target), { signal })).kind === 'absent' ? 'absent' : 'applied',
    lookup: async (name, signal) => {
      const found = (await listScanProfiles(client, { signal })).find((p) => p.name === name);
      const id = typeof found?._id === 'string' ? found._id : undefined;
      return found === undefined ? undefined : { id, createdAt: found.createdAt ?? found.created_at };
    },
  };
}
