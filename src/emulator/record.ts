/**
 * The request, create and change log tests read to prove exactly-once. The lists keep at least the
 * last `max` entries (the oldest are dropped in blocks of a tenth, so dropping stays cheap); the
 * counters behind `requestCount`, `createCount` and `changeCount` count everything and stay exact.
 */
import type { EmulatorRecord, RecordedChange, RecordedCreate, RecordedRequest } from './types.js';

/** The record plus the emulator's writers. */
export interface MutableRecord extends EmulatorRecord {
  addRequest(method: string, path: string, query: string): RecordedRequest;
  addCreate(create: RecordedCreate): void;
  addChange(change: RecordedChange): void;
}

/** Default number of requests (and creates, and changes) kept. */
export const DEFAULT_MAX_RECORDED = 100_000;

function push<T>(list: T[], item: T, max: number): void {
  list.push(item);
  const block = Math.max(1, Math.ceil(max / 10));
  if (list.length >= max + block) list.splice(0, list.length - max);
}

function bump(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

/** A fresh, empty record keeping at least the last `max` entries of each list. */
export function createRecord(max: number = DEFAULT_MAX_RECORDED): MutableRecord {
  const requests: RecordedRequest[] = [];
  const creates: RecordedCreate[] = [];
  const changes: RecordedChange[] = [];
  // Keyed `kind\0op\0name`: exact whatever the lists dropped.
  const changeCounts = new Map<string, number>();
  let seq = 0;
  let total = 0;
  const countOf = (name: string, op: string | undefined, kind: string | undefined): number => {
    let n = 0;
    for (const k of kind === undefined ? ['connection', 'scanProfile'] : [kind]) {
      for (const o of op === undefined ? ['create', 'update', 'delete', 'test'] : [op]) {
        n += changeCounts.get(`${k}\0${o}\0${name}`) ?? 0;
      }
    }
    return n;
  };
  const addChange = (change: RecordedChange): void => {
    push(changes, change, max);
    bump(changeCounts, `${change.kind}\0${change.op}\0${change.name}`);
  };
  return {
    requests,
    creates,
    changes,
    get requestCount() {
      return total;
    },
    createCount(name, kind) {
      return countOf(name, 'create', kind);
    },
    changeCount(name, op, kind) {
      return countOf(name, op, kind);
    },
    reset() {
      requests.length = 0;
      creates.length = 0;
      changes.length = 0;
      changeCounts.clear();
      total = 0;
    },
    addRequest(method, path, query) {
      seq++;
      total++;
      const r: RecordedRequest = {
        seq,
        method,
        path,
        query,
        status: null,
        fault: null,
        applied: false,
        at: Date.now(),
      };
      push(requests, r, max);
      return r;
    },
    addCreate(create) {
      push(creates, create, max);
      addChange({ op: 'create', kind: create.kind, name: create.name, id: create.id, at: create.at });
    },
    addChange,
  };
}
