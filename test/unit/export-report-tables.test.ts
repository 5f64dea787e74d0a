/**
 * A report answer as tables (lib/exports/reports/tabulate.ts), on a hand-built answer: a table per
 * array or object path, nested arrays flattened in order, a column read in the row's item or, when
 * the item lacks its first field, in the enclosing items (innermost first), absent and null empty.
 */
import t from 'tap';
import { cellOf, col, tableScopes, tabulate, under } from '../../lib/exports/reports/tabulate.ts';
import type { ExportCell, ExportTable } from '../../lib/exports/export-dataset.ts';
import { REPORT_DATASETS, REPORT_TABLES } from '../../lib/exports/report-datasets.ts';
import { readFileSync } from 'node:fs';

const answer = {
  period: { startDate: '2026-09-01', endDate: '2026-10-31' },
  totals: { documents: 3, vat: { declared: 48 }, collected: null },
  months: [
    {
      month: '2026-09',
      totals: { documents: 2, vat: { declared: 32 } },
      clients: [
        { client: 'AAA010101AAA', totals: { documents: 1, vat: { declared: 16 } } },
        { client: 'BBB010101BBB', clientName: null, totals: { documents: 1, vat: { declared: 16 } } },
      ],
    },
    { month: '2026-10', totals: { documents: 1, vat: { declared: 16 } }, clients: [] },
    { month: '2026-11', totals: { documents: 0, vat: { declared: 0 } }, clients: [{ client: 'CCC010101CCC', totals: { documents: 0, vat: { declared: 0 } } }] },
  ],
  items: { total: 0, data: [] },
  codes: ['A', 'B'],
};

async function rows(table: ExportTable): Promise<(readonly ExportCell[])[]> {
  const out: (readonly ExportCell[])[] = [];
  for await (const row of table.rows) out.push(row);
  return out;
}

t.test('a table per path, in the order given; an object path is one row, an array one row per item', async (t) => {
  const totals = [col('documents', 'd'), col('vat.declared', 'v')];
  const tables = tabulate(answer, [
    { name: 'months', columns: [col('month', 'm'), ...under('totals', totals)] },
    { name: 'totals', columns: [col('period.startDate', 's'), ...totals, col('collected', 'c')] },
    { name: 'months.clients', columns: [col('month', 'm'), col('client', 'c'), col('clientName', 'n'), ...under('totals', totals)] },
    { name: 'items.data', columns: [col('total', 't')] },
  ]);
  t.same(
    tables.map((x) => x.name),
    ['months', 'totals', 'months.clients', 'items.data'],
  );
  t.same(
    tables[0]!.columns.map((c) => c.name),
    ['month', 'totals.documents', 'totals.vat.declared'],
  );
  t.same(await rows(tables[0]!), [
    ['2026-09', 2, 32],
    ['2026-10', 1, 16],
    ['2026-11', 0, 0],
  ]);
  t.same(await rows(tables[1]!), [['2026-09-01', 3, 48, null]], 'the period read in the answer, collected null: empty');
  t.same(
    await rows(tables[2]!),
    [
      ['2026-09', 'AAA010101AAA', null, 1, 16],
      ['2026-09', 'BBB010101BBB', null, 1, 16],
      ['2026-11', 'CCC010101CCC', null, 0, 0],
    ],
    "each client of each month in order, with its month; its own totals, not the month's; a name absent or null empty",
  );
  t.same(await rows(tables[3]!), [], 'an empty array: no rows');
});

t.test('a path that reaches nothing gives no rows; a column naming a list or an object is refused', async (t) => {
  t.same(tableScopes(answer, 'nothing.here'), []);
  t.same(tableScopes(answer, 'months.nothing'), []);
  const [scopes] = tableScopes(answer, 'totals');
  t.throws(() => cellOf(scopes!, 'vat'), /names no single value/);
  t.throws(() => cellOf(scopes!, 'codes'), /names no single value/);
  t.equal(cellOf(scopes!, 'vat.declared.deeper'), null, 'past a value: empty');
});

t.test('docs/exports-report-tables.md lists every report, its tables and their columns, in order, and nothing else', async (t) => {
  const text = readFileSync(new URL('../../docs/exports-report-tables.md', import.meta.url), 'utf8');
  const documented = new Map<string, { table: string; columns: string[] }[]>();
  let current: { table: string; columns: string[] }[] = [];
  for (const line of text.split('\n')) {
    const dataset = /^### `([^`]+)`/.exec(line)?.[1];
    if (dataset) documented.set(dataset, (current = []));
    const table = /^#### `([^`]+)`/.exec(line)?.[1];
    if (table) current.push({ table, columns: [] });
    const column = /^\| `([^`]+)` \|/.exec(line)?.[1];
    if (column) current.at(-1)?.columns.push(column);
  }
  t.same(
    [...documented.keys()],
    REPORT_DATASETS.map((d) => d.name),
  );
  for (const [name, specs] of REPORT_TABLES) {
    t.same(
      documented.get(name),
      specs.map((s) => ({ table: s.name, columns: s.columns.map((c) => c.name) })),
      name,
    );
  }
});
