import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'csv-stringify/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Output } from '../../src/cli/context.js';
import {
  chooseStdoutFormat,
  createRecordWriter,
  type OutputFormat,
  renderCell,
  renderCsvRow,
  renderTable,
} from '../../src/cli/render.js';
import { fixturesDir } from '../../src/paths.js';

/** An Output that collects stdout text. */
function captureOutput(stdoutIsTTY = false): { out: Output; text: () => string } {
  let stdout = '';
  const out: Output = {
    result: (t) => {
      stdout += `${t}\n`;
    },
    json: (v) => {
      stdout += `${JSON.stringify(v)}\n`;
    },
    write: (t) => {
      stdout += t;
    },
    info: () => {},
    warn: () => {},
    stdoutIsTTY,
    stderrIsTTY: false,
    showProgress: false,
  };
  return { out, text: () => stdout };
}

async function render(
  format: OutputFormat,
  records: Record<string, unknown>[],
  columns: string[],
): Promise<string> {
  const { out, text } = captureOutput();
  const writer = createRecordWriter(format, out, columns);
  for (const r of records) writer.write(r);
  await writer.end();
  expect(writer.count).toBe(records.length);
  return text();
}

describe('csv', () => {
  it('matches the golden quoting fixture (commas, quotes, newlines, nested values)', async () => {
    const folder = join(fixturesDir(), 'render', '001-csv-quoting');
    const input = JSON.parse(await readFile(join(folder, 'input.json'), 'utf8')) as {
      columns: string[];
      records: Record<string, unknown>[];
    };
    const expected = await readFile(join(folder, 'expected.csv'), 'utf8');
    expect(await render('csv', input.records, input.columns)).toBe(expected);
  });

  it('writes only the header for no records', async () => {
    expect(await render('csv', [], ['a', 'b'])).toBe('a,b\n');
  });
});

describe('json and ndjson', () => {
  const records = [{ name: 'a', nested: { x: [1, 2] } }, { name: 'b,"c"' }];

  it('json is one array of whole records', async () => {
    const text = await render('json', records, ['name']);
    expect(JSON.parse(text)).toEqual(records);
  });

  it('json of nothing is []', async () => {
    expect(JSON.parse(await render('json', [], ['name']))).toEqual([]);
  });

  it('ndjson is one record per line', async () => {
    const text = await render('ndjson', records, ['name']);
    expect(
      text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual(records);
  });
});

describe('table', () => {
  it('aligns columns and renders nested values as JSON', () => {
    const table = renderTable(
      [
        { name: 'alpha', type: 's3', tags: ['x'] },
        { name: 'b', type: 'snowflake', tags: null },
      ],
      ['name', 'type', 'tags'],
    );
    expect(table.split('\n')).toEqual([
      'name   type       tags',
      '-----  ---------  -----',
      'alpha  s3         ["x"]',
      'b      snowflake',
    ]);
  });

  it('keeps a cell on one line and cuts long ones', () => {
    const table = renderTable([{ a: 'one\ntwo', b: 'x'.repeat(30) }], ['a', 'b'], 10);
    const row = table.split('\n')[2];
    expect(row).toBe(`one\\ntwo  ${'x'.repeat(9)}…`);
  });

  it('renders 300 000 rows (a large cases list as a table), the widest cell setting the width', () => {
    const rows = Array.from({ length: 300_000 }, (_, i) => ({ id: String(i) }));
    const lines = renderTable(rows, ['id']).split('\n');
    expect(lines).toHaveLength(300_002);
    expect(lines[1]).toBe('------');
  });

  it('is buffered until end', async () => {
    const { out, text } = captureOutput(true);
    const writer = createRecordWriter('table', out, ['name']);
    writer.write({ name: 'a' });
    expect(text()).toBe('');
    await writer.end();
    expect(text()).toBe('name\n----\na\n');
  });
});

describe('defaults', () => {
  it('table on a terminal, ndjson otherwise, json with --json', () => {
    expect(chooseStdoutFormat(undefined, { stdoutIsTTY: true }, false)).toBe('table');
    expect(chooseStdoutFormat(undefined, { stdoutIsTTY: false }, false)).toBe('ndjson');
    expect(chooseStdoutFormat(undefined, { stdoutIsTTY: true }, true)).toBe('json');
  });

  it('renders cells', () => {
    expect(renderCell(undefined)).toBe('');
    expect(renderCell(null)).toBe('');
    expect(renderCell('yes')).toBe('yes');
    expect(renderCell(0)).toBe('0');
    expect(renderCell({ a: 1 })).toBe('{"a":1}');
  });
});

describe('renderCsvRow', () => {
  it('writes exactly what csv-stringify writes, for any cells (plain rows take the fast path)', () => {
    const cell = fc.oneof(
      fc.string({ maxLength: 6 }),
      fc.constantFrom('', 'a,b', 'say "hi"', 'two\nlines', 'cr\r', ' spaced ', '=1+2', 'ünï'),
    );
    fc.assert(
      fc.property(fc.array(cell, { minLength: 1, maxLength: 6 }), (cells) => {
        expect(renderCsvRow(cells)).toBe(stringify([cells], { record_delimiter: '\n' }));
      }),
    );
  });
});
