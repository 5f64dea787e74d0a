/**
 * writeXlsx past a sheet's rows (lib/exports/table-writers.ts): Excel holds 1,048,576 rows a sheet, so a
 * longer table goes on in "<name> (2)", "<name> (3)" …, each with the header row. Shown with sheets of
 * 3 rows (the cap is a parameter; a million rows is no unit test), read back with read-excel-file. Sheet names
 * are Excel's 31 characters at most, the suffix kept: 33 characters → the first 31, or the first 27 and " (2)".
 */
import t from 'tap';
import { PassThrough } from 'node:stream';
import readXlsx from 'read-excel-file/node';
import { writeXlsx } from '../../lib/exports/table-writers.ts';
import type { ExportTable } from '../../lib/exports/export-dataset.ts';

async function* rows(n: number): AsyncIterable<readonly (string | number)[]> {
  for (let i = 1; i <= n; i++) yield [`r${i}`, i];
}

t.test('a table over a sheet goes on in numbered sheets, the header on each', async (t) => {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  const table = (name: string, n: number): ExportTable => ({
    name,
    columns: [
      { name: 'id', description: 'text' },
      { name: 'n', description: 'number' },
    ],
    rows: rows(n),
  });
  const counted: string[] = [];
  await writeXlsx([table('financial-docs-with-a-long-name-x', 5), table('other', 2)], sink, async (name) => void counted.push(name), 3);
  const sheets = await readXlsx(Buffer.concat(chunks));
  t.same(
    sheets.map((s) => [s.sheet, s.data]),
    [
      [
        'financial-docs-with-a-long-name',
        [
          ['id', 'n'],
          ['r1', 1],
          ['r2', 2],
        ],
      ],
      [
        'financial-docs-with-a-long- (2)',
        [
          ['id', 'n'],
          ['r3', 3],
          ['r4', 4],
        ],
      ],
      [
        'financial-docs-with-a-long- (3)',
        [
          ['id', 'n'],
          ['r5', 5],
        ],
      ],
      [
        'other',
        [
          ['id', 'n'],
          ['r1', 1],
          ['r2', 2],
        ],
      ],
    ],
  );
  t.equal(counted.length, 7, 'every row counted once');
});
