/** The request and create log tests read to prove exactly-once. */
import type { EmulatorRecord, RecordedCreate, RecordedRequest } from './types.js';

/** The record plus the emulator's writers. */
export interface MutableRecord extends EmulatorRecord {
  addRequest(method: string, path: string, query: string): RecordedRequest;
  addCreate(create: RecordedCreate): void;
}

/** A fresh, empty record. */
export function createRecord(): MutableRecord {
  const requests: RecordedRequest[] = [];
  const creates: RecordedCreate[] = [];
  let seq = 0;
  return {
    requests,
    creates,
    createCount(name, kind) {
      let n = 0;
      for (const c of creates) if (c.name === name && (kind === undefined || c.kind === kind)) n++;
      return n;
    },
    reset() {
      requests.length = 0;
      creates.length = 0;
    },
    addRequest(method, path, query) {
      seq++;
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
      requests.push(r);
      return r;
    },
    addCreate(create) {
      creates.push(create);
    },
  };
}
