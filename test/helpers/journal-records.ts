import type { JournalRecord } from '../../src/sync/journal/records.js';
import { replayJournal } from '../../src/sync/journal/replay.js';

/** Every valid record of a journal's text, in file order (as the replay's `onRecord` hands them out). */
export function recordsOf(text: string): JournalRecord[] {
  const records: JournalRecord[] = [];
  replayJournal(text, 'journal', { onRecord: (record) => records.push(record) });
  return records;
}
