/**
 * `cases update --audit`: when the trail cannot take the `updated` line after the PATCH went through
 * (the disk filled in between), the one error line says the update was applied, so that exit 2 is not
 * read as "nothing was changed". The failing append is simulated; the full-disk behaviour of the
 * append itself is tested in test/unit/local-files.test.ts.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as audit from '../../src/cases/audit.js';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { toFileWriteError } from '../../src/files.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

vi.mock(import('../../src/cases/audit.js'), async (importOriginal) => {
  const original = await importOriginal();
  return { ...original, appendAuditRecords: vi.fn(original.appendAuditRecords) };
});

let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator({ data: join(process.cwd(), 'fixtures/environments/prod.json') });
});
afterAll(async () => {
  await emu.close();
});

describe('cases update --audit, the trail full after the PATCH', () => {
  it('exit 2 with one line saying the update was applied; the matched lines are on disk', async () => {
    const dir = await makeTempDir('dds-audit-after-');
    const file = join(dir, 'audit.jsonl');
    const real = (await vi.importActual<typeof audit>('../../src/cases/audit.js')).appendAuditRecords;
    vi.mocked(audit.appendAuditRecords).mockImplementation(async (path, records) => {
      if (records[0]?.event !== 'updated') return real(path, records);
      const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), {
        code: 'ENOSPC',
        syscall: 'write',
      });
      throw toFileWriteError(enospc, path, 'audit file');
    });
    const run = await runCli(
      [
        'cases',
        'update',
        '--env',
        emu.url,
        '--where',
        'caseStatus=open',
        '--set',
        'caseStatus=resolved',
        '--yes',
        '--audit',
        file,
      ],
      { env: { DDS_TOKEN: emu.token } },
    );
    const errors = run.stderr.split('\n').filter((l) => l.startsWith('error: '));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(
      new RegExp(
        `^error: ${file}: the update was applied \\(\\d+ cases reported\\), but its outcome could not be added to the audit file \\(ENOSPC\\)\\. The change itself is done`,
      ),
    );
    expect(run.exitCode).toBe(2);
    expect(emu.record.requests.filter((r) => r.method === 'PATCH')).toHaveLength(1);
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    expect(lines.every((l) => (JSON.parse(l) as { event: string }).event === 'matched')).toBe(true);
  });
});
