/**
 * The report datasets of the exports (issue 38, docs/exports-report-tables.md) on the demo data:
 * each report is asked over HTTP (JSON), its dataset's tables are built with the same query on the
 * same database, and every cell is checked against the JSON answer by following the column's path
 * in the item the row stands for — read here from the table's name and the response schema, not
 * from the tabulation code. Every column names a scalar field of the operation's response schema
 * (the bundled spec), and every report-like GET (a `reports` budget answer that is not a page of a
 * list) has a dataset.
 */
import t from 'tap';
import { startHarness, assertConforms } from './helpers/harness.ts';
import { loadDemoData, DEMO_TENANTS } from '../scripts/demo/load.ts';
import { loadSpec } from '../handlers/app.ts';
import { deref, type Json } from '../lib/spec/deref.ts';
import { validators } from '../generated/validators.js';
import { REPORT_DATASETS } from '../lib/exports/report-datasets.ts';
import type { ExportCell, ExportTable } from '../lib/exports/export-dataset.ts';

t.setTimeout(300_000);
const NOW = new Date('2026-11-20T18:00:00Z');
const h = await startHarness(t, { build: { now: () => NOW } });
const tenant = DEMO_TENANTS[0]!;
// Only the tenant the reports are asked as: each demo tenant is generated from its own seed, so its
// records are those of the whole dataset; the other's would only cost the load.
await loadDemoData(h.db, { invoices: 300, trips: 300, endDate: NOW, tenants: [tenant.rfc] });

/** The query each report is asked with (as a URL carries it); periods chosen to hold demo data. */
const QUERIES: Record<string, Record<string, string>> = {
  getTaxSummary: { startDate: '2026-09-01', endDate: '2026-10-31', limit: '40' },
  getTaxPosition: { month: '2026-10', limit: '3' },
  getDiot: { month: '2026-10' },
  getReceivablesAging: { limit: '15' },
  getCashInflowForecast: { startDate: '2026-08-01', endDate: '2026-11-20', limit: '20' },
  auditDiscountsAndShrinkage: { startDate: '2026-05-01', endDate: '2026-11-20', limit: '10' },
  auditFleetUtilization: { startDate: '2026-08-01', endDate: '2026-11-20' },
  auditDispatchToBill: { startDate: '2026-05-01', endDate: '2026-11-20', limit: '10' },
  getFreightUnitEconomics: { startDate: '2026-05-01', endDate: '2026-11-20', limit: '10' },
};

type Obj = { [key: string]: Json };
const isObj = (v: Json | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const spec = deref(loadSpec()) as Obj;
const paths = spec.paths as Obj;
interface Operation {
  path: string;
  op: Obj;
}
const getOperations = new Map<string, Operation>();
for (const [path, item] of Object.entries(paths)) {
  const get = isObj(item) ? item.get : undefined;
  if (isObj(get) && typeof get.operationId === 'string') getOperations.set(get.operationId, { path, op: get });
}
const responseSchema = (op: Obj): Obj => {
  const ok = (op.responses as Obj)['200'] as Obj;
  return ((ok.content as Obj)['application/json'] as Obj).schema as Obj;
};
const propertiesOf = (schema: Obj): Obj => (isObj(schema.properties) ? schema.properties : {});
const isArraySchema = (s: Obj): boolean => s.type === 'array';

/** The schemas of a row's item and of the items enclosing it (innermost first), from the table's name. */
function schemaScopes(root: Obj, table: string): Obj[] {
  const scopes = [root];
  for (const field of table.split('.')) {
    const next = propertiesOf(scopes[0]!)[field];
    if (!isObj(next)) return [];
    scopes.unshift(isArraySchema(next) ? (next.items as Obj) : next);
  }
  return scopes;
}

/** Which enclosing level (0 = the row's item) declares a column's first field, and the leaf schema of its path; null when the schema has none. */
function columnSchema(scopes: Obj[], column: string): { level: number; leaf: Obj } | null {
  const [first, ...rest] = column.split('.');
  const level = scopes.findIndex((s) => first! in propertiesOf(s));
  if (level < 0) return null;
  let node: Json | undefined = propertiesOf(scopes[level]!)[first!];
  for (const field of rest) node = isObj(node) ? propertiesOf(node)[field] : undefined;
  return isObj(node) ? { level, leaf: node } : null;
}

/** The JSON items a table's rows stand for, each with its enclosing items (innermost first). */
function jsonItems(answer: Obj, table: string): Obj[][] {
  let reached: Obj[][] = [[answer]];
  for (const field of table.split('.')) {
    reached = reached.flatMap((scopes) => {
      const v = scopes[0]![field];
      const items = Array.isArray(v) ? v : [v];
      return items.filter(isObj).map((item) => [item, ...scopes]);
    });
  }
  return reached;
}

function valueAt(item: Obj, path: string): Json | undefined {
  let v: Json | undefined = item;
  for (const field of path.split('.')) v = isObj(v) ? v[field] : undefined;
  return v;
}

async function collect(table: ExportTable): Promise<(readonly ExportCell[])[]> {
  const rows: (readonly ExportCell[])[] = [];
  for await (const row of table.rows) rows.push(row);
  return rows;
}

t.test('every report-like GET (reports budget, not a page of a list) has a dataset, and each dataset names one', async (t) => {
  const reportOps = [...getOperations.entries()]
    .filter(([, { op }]) => op['x-rate-limit-budget'] === 'reports' && !('meta' in propertiesOf(responseSchema(op))))
    .map(([id]) => id)
    .sort();
  t.same(REPORT_DATASETS.map((d) => d.operationId).sort(), reportOps);
  t.equal(new Set(REPORT_DATASETS.map((d) => d.name)).size, REPORT_DATASETS.length, 'dataset names are unique');
  for (const d of REPORT_DATASETS) t.equal(d.kind, 'report', `${d.name} is a report`);
});

/**
 * The per-client tables (docs/exports-report-tables.md): the file holds every client, where the JSON answer lists the
 * first `limit`; they are checked against the answer asked with the largest limit (the demo has 20 clients).
 */
const EVERY_CLIENT = new Set([
  'tax-summary months.clients.data',
  'receivables-aging clients.data',
  'cash-inflow-forecast clients.data',
  'cash-inflow-forecast concentration.shares',
  'discounts-and-shrinkage discounts.byClient.data',
  'discounts-and-shrinkage discounts.byClientMonth.data',
  'discounts-and-shrinkage demurrage.byClient.data',
  'discounts-and-shrinkage shrinkage.byClient.data',
  'dispatch-to-bill byClient.data',
  'unit-economics byClient.data',
]);

let cellsChecked = 0;
for (const dataset of REPORT_DATASETS) {
  t.test(`${dataset.name} (${dataset.operationId}): every cell is the JSON answer's value at its column's path`, async (t) => {
    const operation = getOperations.get(dataset.operationId);
    if (!operation) return t.fail(`${dataset.operationId} is no GET operation of the spec`);
    const raw = QUERIES[dataset.operationId];
    if (!raw) return t.fail(`no query for ${dataset.operationId} in this test`);
    const res = await h.app.inject({ method: 'GET', url: `${operation.path}?${new URLSearchParams(raw).toString()}`, headers: { 'x-api-key': tenant.apiKey } });
    t.equal(res.statusCode, 200, `${operation.path} answers 200`);
    assertConforms(t, res, 'GET', operation.path);
    const answer = res.json<Obj>();
    const everyClientRes = await h.app.inject({
      method: 'GET',
      url: `${operation.path}?${new URLSearchParams({ ...raw, ...('limit' in raw ? { limit: '100' } : {}) }).toString()}`,
      headers: { 'x-api-key': tenant.apiKey },
    });
    const everyClientAnswer = everyClientRes.json<Obj>();

    // The query as the operation validates it (coerced, defaults filled in), as the export hands it on.
    const query: Record<string, unknown> = { ...raw };
    const validate = validators[`GET ${operation.path} querystring`];
    t.ok(validate?.(query), 'the query is valid for the operation');
    // The exports runner's context: the database, the tenant, the clock and the service's settings.
    const ctx = { db: h.db, tenant: tenant.rfc, now: NOW, config: h.config };
    const tables = await dataset.tables(ctx, query);
    t.ok(tables.length > 0, 'at least one table');
    t.equal(new Set(tables.map((x) => x.name)).size, tables.length, 'table names are unique');

    const schema = responseSchema(operation.op);
    const rowCounts: number[] = [];
    for (const table of tables) {
      t.ok(table.name.length <= 31 && !/[[\]:*?/\\]/.test(table.name), `${table.name}: a valid sheet name`);
      const scopes = schemaScopes(schema, table.name);
      t.ok(scopes.length > 1, `${table.name} names an array or object of the answer`);
      const located = table.columns.map((c) => columnSchema(scopes, c.name));
      table.columns.forEach((c, i) => {
        const at = located[i];
        t.ok(at && at.leaf.type !== 'object' && at.leaf.type !== 'array', `${table.name}.${c.name} is a scalar field of the response schema`);
        t.ok(c.description.length > 0 && c.description.length <= 120, `${table.name}.${c.name} has a short description`);
      });
      t.equal(new Set(table.columns.map((c) => c.name)).size, table.columns.length, `${table.name}: column names are unique`);

      const items = jsonItems(EVERY_CLIENT.has(`${dataset.name} ${table.name}`) ? everyClientAnswer : answer, table.name);
      const rows = await collect(table);
      t.equal(rows.length, items.length, `${table.name}: one row per item of the answer (${items.length})`);
      rowCounts.push(rows.length);
      const mismatches: string[] = [];
      rows.forEach((row, r) => {
        t.equal(row.length, table.columns.length);
        table.columns.forEach((c, i) => {
          const at = located[i];
          if (!at) return;
          const expected = valueAt(items[r]![at.level]!, c.name) ?? null;
          cellsChecked++;
          if (row[i] !== expected) mismatches.push(`row ${r} ${c.name}: ${JSON.stringify(row[i])} ≠ ${JSON.stringify(expected)}`);
        });
      });
      t.same(mismatches, [], `${table.name}: every cell equals the answer's value`);
    }
    t.ok(rowCounts[0]! > 0, `the first table (a CSV's default) has rows on the demo data: ${tables.map((x, i) => `${x.name} ${rowCounts[i]}`).join(', ')}`);
  });
}

t.test('a period longer than 366 days: the file says which endDate was asked for, as the JSON answer does', async (t) => {
  // 2016-01-01 to 2026-12-31 is cut to its first 366 days: 2016 is a leap year, so up to 2016-12-31 (by hand).
  const dataset = REPORT_DATASETS.find((d) => d.operationId === 'getTaxSummary')!;
  const query: Record<string, unknown> = { startDate: '2016-01-01', endDate: '2026-12-31' };
  t.ok(validators['GET /api/tax-summary querystring']?.(query), 'a valid query');
  const tables = await dataset.tables({ db: h.db, tenant: tenant.rfc, now: NOW, config: h.config }, query);
  const table = tables.find((x) => x.columns.some((c) => c.name === 'period.requestedEndDate'))!;
  t.ok(table, 'a table with the period');
  const [row] = await collect(table);
  const at = (name: string) => row![table.columns.findIndex((c) => c.name === name)];
  t.same([at('period.startDate'), at('period.endDate'), at('period.requestedEndDate')], ['2016-01-01', '2016-12-31', '2026-12-31']);
});

t.test("the DIOT's rows follow the layout of its CSV form: the same columns in the same order, one row per CSV line", async (t) => {
  const diot = REPORT_DATASETS.find((d) => d.operationId === 'getDiot')!;
  const csv = await h.app.inject({ method: 'GET', url: '/api/tax/diot?month=2026-10&format=csv', headers: { 'x-api-key': tenant.apiKey } });
  t.equal(csv.statusCode, 200);
  const [header, ...lines] = csv.body.trimEnd().split(/\r?\n/);
  const ctx = { db: h.db, tenant: tenant.rfc, now: NOW, config: h.config };
  const [rows] = await diot.tables(ctx, { month: '2026-10', format: 'json' });
  // `paid.rate16` is the CSV's `paidRate16`: the path's fields joined in camel case.
  const camel = (path: string) => path.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase());
  const csvColumns = header!.split(',');
  t.same(
    rows!.columns.slice(0, csvColumns.length).map((c) => camel(c.name)),
    csvColumns,
  );
  t.equal((await collect(rows!)).length, lines.length);
  t.ok(lines.length > 0, 'the month has DIOT rows');
});

t.test('cells were checked', async (t) => {
  t.ok(cellsChecked > 1000, `${cellsChecked} cells`);
});
