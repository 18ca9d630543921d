import type { JournalObject, JournalRecord } from '../../src/sync/journal/records.js';
import { replayJournal } from '../../src/sync/journal/replay.js';

/** Every valid record of a journal's text, in file order (as the replay's `onRecord` hands them out). */
export function recordsOf(text: string): JournalRecord[] {
  const records: JournalRecord[] = [];
  replayJournal(text, 'journal', { onRecord: (record) => records.push(record) });
  return records;
}

/**
 * The intent and the outcome of a create of `name` answered with success (`targetId` `id-<name>`), as
 * an import of `object` writes them in run `run`. `object` is any tag, also one no kind registers.
 */
export function createdRecords(object: string, name: string, at: string, run = 1): JournalRecord[] {
  const base = { run, object: object as JournalObject, op: 'create' as const, name, targetName: name, at };
  return [
    { kind: 'intent', ...base, attempt: 1 },
    { kind: 'outcome', ...base, result: 'created', targetId: `id-${name}`, via: 'post' },
  ];
}
