/**
 * Exports (issue 38; docs/exports.md) through HTTP and MCP. The expected values come from the JSON
 * pages of the same list read through the API (and read back from the files with csv-parse and
 * read-excel-file, not the writer's package), the corpus files on disk (sha256), and an HMAC
 * computed here. The service's clock is the test's: expiry is reached by moving it, never by sleeping.
 */
import t, { type Test } from 'tap';
import { Binary, ObjectId } from 'mongodb';
import { COLLECTIONS } from '../lib/db/collections.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import readXlsx from 'read-excel-file/node';
import yauzl from 'yauzl';
import { startHarness, assertConforms, KEY_B } from './helpers/harness.ts';
import { connect, listen } from './helpers/mcp.ts';
import { corpusDir } from './helpers/cfdi-corpus.ts';
import { invoiceXml, paymentXml } from './helpers/cfdi-builder.ts';
import { createApiKey } from '../lib/auth/api-keys.ts';
import { loadDemoData, DEMO_TENANTS } from '../scripts/demo/load.ts';
import { exportsPlugin } from '../lib/exports/plugin.ts';
import { webhooksPlugin } from '../lib/webhooks/plugin.ts';
import { DATASET_NAMES, TABLE_DATASETS } from '../lib/exports/datasets.ts';
import { REPORT_TABLES } from '../lib/exports/report-datasets.ts';
import { csvField, writeCsv, writeXlsx } from '../lib/exports/table-writers.ts';
import { writeOriginalsZip } from '../lib/exports/originals-zip.ts';
import type { ExportCell, ExportTable } from '../lib/exports/export-dataset.ts';
import { Writable } from 'node:stream';
import { listOperations, type JsonSchema } from '../lib/spec/operations.ts';
import { loadSpec } from '../handlers/app.ts';
import { validators } from '../generated/validators.js';
import { deref, type Json } from '../lib/spec/deref.ts';

// An engine, a demo load and some thirty exports built: tap's 120 s per file is too short on a loaded machine (138 s at load 20).
t.setTimeout(300_000);

let clock = Date.parse('2026-11-20T12:00:00Z');
const now = () => new Date(clock);

// An in-test webhook receiver: records each request's raw body and headers.
const deliveries: { body: string; headers: http.IncomingHttpHeaders }[] = [];
const receiver = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => (body += c));
  req.on('end', () => {
    deliveries.push({ body, headers: req.headers });
    res.writeHead(200).end('ok');
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
t.teardown(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

const ENV = { EXPORT_PROCESS_EVERY_MS: '100', WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*', WEBHOOK_PROCESS_EVERY_MS: '100' };
const workers = (on: boolean) => [exportsPlugin({ worker: on }), webhooksPlugin({ worker: on })];
const h = await startHarness(t, { env: ENV, build: { now, plugins: workers(true) } });
await h.app.ready();

const demo = DEMO_TENANTS[0]!;
// Only the tenant the exports are made as (each demo tenant is generated from its own seed, so its
// records are those of the whole dataset); "another tenant" below is the harness's key B.
await loadDemoData(h.db, { invoices: 120, trips: 30, tenants: [demo.rfc] });
const KEY = demo.apiKey;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
async function waitFor<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

type ExportView = {
  id: string;
  status: string;
  progress: { rows: number; total: number | null };
  file: { name: string; contentType: string; size: number; sha256: string } | null;
  download: { url: string; expiresAt: string } | null;
  failure: string | null;
};
const api = (method: 'GET' | 'POST', url: string, key: string | null = KEY, payload?: object) =>
  h.app.inject({ method, url, headers: key ? { 'x-api-key': key } : {}, ...(payload ? { payload } : {}) });

/** `POST /api/exports/datasets/<dataset>?<query>`, the dataset's own operation. */
const exportUrl = (dataset: string, query: Record<string, string>): string => `/api/exports/datasets/${dataset}?${new URLSearchParams(query).toString()}`;
async function queueExport(dataset: string, query: Record<string, string>, key = KEY): Promise<ExportView> {
  const res = await api('POST', exportUrl(dataset, query), key);
  if (res.statusCode !== 202) throw new Error(`POST ${exportUrl(dataset, query)} ${res.statusCode}: ${res.body}`);
  return res.json<ExportView>();
}
async function ready(id: string, key = KEY): Promise<ExportView> {
  return waitFor(`export ${id}`, async () => {
    const v = (await api('GET', `/api/exports/${id}`, key)).json<ExportView>();
    if (v.status === 'failed') throw new Error(`export failed: ${v.failure}`);
    return v.status === 'ready' ? v : null;
  });
}
const pathOf = (url: string): string => new URL(url).pathname;

/** The list's JSON pages, walked by cursor through the API (7 a page, so the walk crosses pages). */
async function jsonItems(url: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  do {
    const res = await api('GET', `${url}&limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    t.equal(res.statusCode, 200, res.body.slice(0, 200));
    const page = res.json<{ meta: { nextCursor: string | null }; data: Record<string, unknown>[] }>();
    items.push(...page.data);
    cursor = page.meta.nextCursor;
  } while (cursor);
  return items;
}
/** The value at a dotted path, read here (not with the service's reader). */
const valueAt = (item: unknown, p: string): unknown =>
  p.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), item);
const asText = (v: unknown): string =>
  v === null || v === undefined ? '' : typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v);

const FILTER = { startDate: '2025-01-01', endDate: '2026-12-31', paymentStatus: 'unpaid' };
const FILTER_QS = 'startDate=2025-01-01&endDate=2026-12-31&paymentStatus=unpaid';

t.test('the dataset names are the spec enum', async (t) => {
  const yaml = readFileSync(new URL('../spec/schemas/exports.yaml', import.meta.url), 'utf8');
  const enumLine = /ExportDatasetName:\n {2}type: string\n {2}enum:\s*\[([^\]]*)\]/.exec(yaml)![1]!;
  t.same(
    [...DATASET_NAMES].sort(),
    enumLine
      .split(',')
      .map((s) => s.trim())
      .sort(),
  );
});

const OPERATIONS = listOperations(loadSpec());
/** The export operations: one `POST /api/exports/datasets/<dataset>` per dataset. */
const exportOperations = () => OPERATIONS.filter((o) => o.method === 'POST' && o.path.startsWith('/api/exports/datasets/'));
const propertiesOf = (s: JsonSchema | undefined): Record<string, unknown> => (s?.properties ?? {}) as Record<string, unknown>;
const requiredOf = (s: JsonSchema | undefined): string[] => (Array.isArray(s?.required) ? s.required.map(String) : []);

t.test("an export operation per dataset, whose query is its JSON operation's parameters, with format (and a report's table)", async (t) => {
  t.same(
    exportOperations()
      .map((o) => o.path.slice('/api/exports/datasets/'.length))
      .sort(),
    [...DATASET_NAMES].sort(),
    'a path per dataset',
  );
  for (const dataset of TABLE_DATASETS) {
    const op = OPERATIONS.find((o) => o.method === 'POST' && o.path === `/api/exports/datasets/${dataset.name}`)!;
    const json = OPERATIONS.find((o) => o.operationId === dataset.operationId)!;
    // A list's file holds every page of its summary items, and the fleet report's every row (its JSON pages them);
    // the DIOT's `format` (json or csv) is its JSON operation's rendering.
    const notTaken =
      dataset.kind === 'list'
        ? ['page', 'limit', 'cursor', 'detail']
        : dataset.name === 'diot'
          ? ['format']
          : dataset.name === 'fleet-utilization'
            ? ['page', 'limit']
            : [];
    const filters = Object.keys(propertiesOf(json.querystring)).filter((n) => !notTaken.includes(n));
    const mine = propertiesOf(op.querystring);
    t.same(
      Object.keys(mine)
        .filter((n) => n !== 'format' && n !== 'table')
        .sort(),
      [...filters].sort(),
      `${dataset.name}: the filters of ${json.operationId}`,
    );
    for (const n of filters) t.same(mine[n], propertiesOf(json.querystring)[n], `${dataset.name}.${n}: the same schema`);
    t.same(
      requiredOf(op.querystring).sort(),
      [...requiredOf(json.querystring).filter((n) => !notTaken.includes(n)), 'format'].sort(),
      `${dataset.name}: required`,
    );
    t.match(mine.format, { enum: ['csv', 'xlsx'] });
    if (dataset.kind === 'report')
      t.same(
        (mine.table as { enum?: unknown }).enum,
        REPORT_TABLES.get(dataset.name)!.map((tb) => tb.name),
        `${dataset.name}: table is one of its tables`,
      );
    else t.notOk('table' in mine, `${dataset.name}: one table`);
  }
  const originals = OPERATIONS.find((o) => o.path === '/api/exports/datasets/originals')!;
  t.same(Object.keys(propertiesOf(originals.querystring)).sort(), ['direction', 'endDate', 'startDate']);
  t.same(requiredOf(originals.querystring).sort(), ['endDate', 'startDate']);
});

t.test('CSV and XLSX of a filtered list equal its JSON pages', async (t) => {
  const expected = await jsonItems(`/api/financial-docs?${FILTER_QS}`);
  t.ok(expected.length > 7, `${expected.length} unpaid documents, more than a page`);
  const all = (await api('GET', '/api/financial-docs?limit=1')).json<{ meta: { total: number } }>().meta.total;
  t.ok(all > expected.length, 'the filter leaves documents out');

  const created = await api('POST', exportUrl('financial-docs', { format: 'csv', ...FILTER }));
  t.equal(created.statusCode, 202);
  assertConforms(t, created, 'POST', '/api/exports/datasets/financial-docs');
  t.same(created.json<{ query: unknown }>().query, FILTER, 'the filters kept, format apart');
  t.equal(created.headers.location, `/api/exports/${created.json<ExportView>().id}`);
  const csv = await ready(created.json<ExportView>().id);
  t.same(csv.progress, { rows: expected.length, total: expected.length });
  const got = await api('GET', `/api/exports/${csv.id}`);
  assertConforms(t, got, 'GET', '/api/exports/:id');
  const file = await api('GET', `/api/exports/${csv.id}/file`);
  t.equal(file.statusCode, 200);
  t.match(file.headers['content-type'], /^text\/csv/);
  t.match(file.headers['content-disposition'], `attachment; filename="${csv.file!.name}"`);
  t.equal(createHash('sha256').update(file.rawPayload).digest('hex'), csv.file!.sha256);
  const rows: string[][] = parseCsv(file.rawPayload, { relax_column_count: false });
  const [header, ...body] = rows;
  t.ok(header!.includes('amounts.total') && header!.includes('invoice.uuid') && header!.includes('balance.pending'), 'columns are JSON paths');
  t.equal(body.length, expected.length);
  t.same(
    body,
    expected.map((item) => header!.map((c) => asText(valueAt(item, c)))),
    'every cell is the JSON value',
  );

  const x = await ready((await queueExport('financial-docs', { format: 'xlsx', ...FILTER })).id);
  const xfile = await api('GET', `/api/exports/${x.id}/file`);
  t.equal(xfile.headers['content-type'], 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  const sheets = await readXlsx(xfile.rawPayload);
  t.equal(sheets.length, 1);
  const [xheader, ...xbody] = sheets[0]!.data;
  t.same(xheader, header);
  t.same(
    xbody,
    expected.map((item) =>
      header!.map((c) => {
        const v = valueAt(item, c);
        return v === undefined || v === null ? null : typeof v === 'object' ? JSON.stringify(v) : v;
      }),
    ),
    'every cell is the JSON value, numbers as numbers',
  );
});

t.test('a list exported with updatedSince says where the next sync resumes (syncFrom), as its JSON pages do; without it, null', async (t) => {
  // No write in flight: the export's clock (the test's) less the documented 2 s margin (docs/using-the-api.md).
  const expected = new Date(clock - 2000).toISOString();
  const json = (await api('GET', '/api/financial-docs?limit=1&updatedSince=2020-01-01T00:00:00Z')).json<{ meta: { syncFrom: string } }>();
  t.equal(json.meta.syncFrom, expected, 'the JSON page, by hand');
  for (const dataset of ['financial-docs', 'shipments']) {
    const v = await ready((await queueExport(dataset, { format: 'csv', updatedSince: '2020-01-01T00:00:00Z' })).id);
    t.equal((v as ExportView & { syncFrom: string | null }).syncFrom, expected, `${dataset}: the export`);
    const got = await api('GET', `/api/exports/${v.id}`);
    assertConforms(t, got, 'GET', '/api/exports/:id');
  }
  const plain = await ready((await queueExport('financial-docs', { format: 'csv' })).id);
  t.equal((plain as ExportView & { syncFrom: string | null }).syncFrom, null, 'no updatedSince: nothing to resume from');
  const queued = await queueExport('shipments', { format: 'csv', updatedSince: '2020-01-01T00:00:00Z' });
  t.equal((queued as ExportView & { syncFrom: string | null }).syncFrom, null, 'not before it is ready');

  const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY }, '?toolsets=exports');
  const made = (await client.callTool({ name: 'exportFinancialDocs', arguments: { format: 'csv', updatedSince: '2020-01-01T00:00:00Z' } })) as unknown as {
    structuredContent: ExportView;
  };
  await ready(made.structuredContent.id);
  const viaMcp = (await client.callTool({ name: 'getExport', arguments: { id: made.structuredContent.id } })) as unknown as {
    structuredContent: ExportView & { syncFrom: string | null };
  };
  t.equal(viaMcp.structuredContent.syncFrom, expected, 'MCP: getExport');
});

t.test('a report exports as its JSON answer: the CSV holds its first table, the XLSX every table', async (t) => {
  const QS = 'startDate=2025-07-01&endDate=2025-12-31';
  const res = await api('GET', `/api/tax-summary?${QS}`);
  t.equal(res.statusCode, 200);
  const answer = res.json<{ months: Record<string, unknown>[] }>();
  t.ok(answer.months.length > 1, `${answer.months.length} months`);
  const v = await ready((await queueExport('tax-summary', { format: 'csv', startDate: '2025-07-01', endDate: '2025-12-31' })).id);
  const rows: string[][] = parseCsv((await api('GET', `/api/exports/${v.id}/file`)).rawPayload, { relax_column_count: false });
  const [header, ...body] = rows;
  t.ok(header!.includes('month'), 'a row per month');
  // A column the month lacks is the answer's own (the period): read from the enclosing object, as docs/exports-report-tables.md says.
  const cell = (item: Record<string, unknown>, c: string) => asText(c.split('.')[0]! in item ? valueAt(item, c) : valueAt(answer, c));
  t.same(
    body,
    answer.months.map((m) => header!.map((c) => cell(m, c))),
    'every cell is the JSON value',
  );
  const x = await ready((await queueExport('tax-summary', { format: 'xlsx', table: 'totals', startDate: '2025-07-01', endDate: '2025-12-31' })).id);
  const sheets = await readXlsx((await api('GET', `/api/exports/${x.id}/file`)).rawPayload);
  t.ok(sheets.length > 1, `${sheets.length} sheets`);
  t.equal(sheets[0]!.sheet, 'months');
  t.same(sheets[0]!.data[0], header, 'the first sheet has the CSV columns');
  t.equal(sheets[0]!.data.length, rows.length, 'and its rows');
  t.same(
    sheets.map((s) => s.sheet),
    ['months', 'totals', 'months.clients.data', 'findings.items'],
    'every table (docs/exports-report-tables.md), whatever `table` says',
  );
  t.equal(x.file!.name, `tax-summary-${x.id}.xlsx`, 'no table kept for an XLSX');

  // `table` chooses the CSV's table: the totals, one row, the answer's `totals` object.
  const second = await ready((await queueExport('tax-summary', { format: 'csv', table: 'totals', startDate: '2025-07-01', endDate: '2025-12-31' })).id);
  const totalsRows: string[][] = parseCsv((await api('GET', `/api/exports/${second.id}/file`)).rawPayload, { relax_column_count: false });
  const [totalsHeader, ...totalsBody] = totalsRows;
  t.equal(totalsBody.length, 1, 'one row of totals');
  const totals = (answer as unknown as { totals: Record<string, unknown> }).totals;
  const fromTotals = totalsHeader!.filter((c) => c in totals);
  t.ok(fromTotals.length > 3, `${fromTotals.length} columns read from the answer's totals`);
  t.same(
    fromTotals.map((c) => totalsBody[0]![totalsHeader!.indexOf(c)]),
    fromTotals.map((c) => asText(totals[c])),
    'the cells are the JSON totals',
  );
});

t.test('the signed link works without a key, then 404s after expiry; other tenants get 404', async (t) => {
  const v = await ready((await queueExport('shipments', { format: 'csv', startDate: '2025-01-01', endDate: '2026-12-31' })).id);
  t.ok(v.download);
  const shared = await api('GET', pathOf(v.download!.url), null);
  t.equal(shared.statusCode, 200);
  t.equal(createHash('sha256').update(shared.rawPayload).digest('hex'), v.file!.sha256);
  t.equal(shared.headers['cache-control'], 'no-store');
  const link = pathOf(v.download!.url);
  const at = link.length - 10;
  const tampered = `${link.slice(0, at)}${link[at] === 'A' ? 'B' : 'A'}${link.slice(at + 1)}`;
  t.equal((await api('GET', tampered, null)).statusCode, 404);
  // Its last character too: it holds 2 bits no byte of the signature uses (RFC 4648 §3.5), so a decoder reads three other
  // spellings as the same bytes; only the spelling issued opens the file.
  const opened: string[] = [];
  for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_')
    if (c !== link.at(-1) && (await api('GET', `${link.slice(0, -1)}${c}`, null)).statusCode !== 404) opened.push(c);
  t.same(opened, [], 'no other last character opens it');
  t.equal((await api('GET', `/api/exports/${v.id}`, KEY_B)).statusCode, 404, "another tenant's export");
  t.equal((await api('GET', `/api/exports/${v.id}/file`, KEY_B)).statusCode, 404);
  const saved = clock;
  clock = Date.parse(v.download!.expiresAt) + 1000;
  try {
    t.equal((await api('GET', pathOf(v.download!.url), null)).statusCode, 404, 'expired link');
    t.equal((await api('GET', `/api/exports/${v.id}/file`)).statusCode, 404, 'expired file');
    t.equal((await api('GET', `/api/exports/${v.id}`)).json<ExportView>().status, 'expired');
  } finally {
    clock = saved;
  }
});

t.test('the exports list pages by cursor at any depth: each export once, newest first, none queued after the walk began', async (t) => {
  const tenant = 'CUR010101AB1';
  const key = (await createApiKey(h.db, tenant, 'exports by cursor')).key;
  const first = await ready((await queueExport('shipments', { format: 'csv', startDate: '2025-01-01', endDate: '2025-01-31' }, key)).id, key);
  // Six more records of this tenant, two of them created at one instant (the id breaks the tie).
  const exportsColl = h.db.collection(COLLECTIONS.exports);
  const stored = (await exportsColl.findOne({ _id: new ObjectId(first.id) }))!;
  const at = (s: number) => new Date(Date.parse('2026-01-01T00:00:00Z') + s * 1000);
  for (const created of [at(1), at(2), at(2), at(3), at(4), at(5)]) await exportsColl.insertOne({ ...stored, _id: new ObjectId(), createdAt: created });
  // The order the list promises (createdAt, then _id, both descending), computed here from the stored records.
  const expected = (await exportsColl.find({ tenant }).toArray())
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a._id.toHexString() < b._id.toHexString() ? 1 : -1))
    .map((d) => d._id.toHexString());
  t.equal(expected.length, 7);

  const page1 = await api('GET', '/api/exports?limit=3', key);
  assertConforms(t, page1, 'GET', '/api/exports');
  t.match(page1.json().meta, { total: 7, page: 1, pages: 3, hasMore: true, nextCursor: String });
  await queueExport('shipments', { format: 'csv', startDate: '2025-02-01', endDate: '2025-02-28' }, key); // newer than the walk
  const walked: string[] = page1.json().data.map((e: ExportView) => e.id);
  let cursor: string | null = page1.json().meta.nextCursor;
  while (cursor) {
    const res = await api('GET', `/api/exports?limit=3&cursor=${cursor}`, key);
    assertConforms(t, res, 'GET', '/api/exports');
    walked.push(...res.json().data.map((e: ExportView) => e.id));
    cursor = res.json().meta.nextCursor;
  }
  t.same(walked, expected, 'each once, in order, the export queued meanwhile not among them');
  const second = page1.json().meta.nextCursor as string;
  t.equal((await api('GET', `/api/exports?limit=3&page=2&cursor=${second}`, key)).statusCode, 400, 'cursor and page');
  const foreign = await api('GET', `/api/exports?limit=3&cursor=${second}`, KEY_B);
  t.equal(foreign.statusCode, 404, "another tenant's walk");
  assertConforms(t, foreign, 'GET', '/api/exports');

  const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': key }, '?toolsets=exports');
  const tool = (await client.callTool({ name: 'listExports', arguments: { limit: 3, cursor: second } })) as unknown as {
    isError?: boolean;
    structuredContent?: { data: ExportView[] };
  };
  t.notOk(tool.isError, JSON.stringify(tool.structuredContent));
  t.same(
    tool.structuredContent?.data.map((e) => e.id),
    expected.slice(3, 6),
    "the tool's second page is the REST walk's",
  );
});

t.test('a file of many chunks downloads whole and in order', async (t) => {
  const v = await ready((await queueExport('shipments', { format: 'csv', startDate: '2025-01-01', endDate: '2026-12-31' })).id);
  const first = await api('GET', `/api/exports/${v.id}/file`);
  t.equal(first.statusCode, 200);
  const bytes = first.rawPayload;
  // The same bytes stored again as 11 chunks inserted out of order, beside another export's chunk: the download must
  // put them back in `n` order and take this export's only.
  const chunks = h.db.collection('exportChunks');
  const exportId = new ObjectId(v.id);
  const tenant = (await chunks.findOne({ exportId }))?.tenant as string;
  await chunks.deleteMany({ exportId });
  const size = Math.ceil(bytes.length / 11);
  const pieces = Array.from({ length: 11 }, (_, n) => ({
    _id: new ObjectId(),
    tenant,
    exportId,
    n,
    data: new Binary(bytes.subarray(n * size, (n + 1) * size)),
  }));
  await chunks.insertMany(
    [pieces[7], pieces[0], pieces[10], pieces[3], pieces[1], pieces[9], pieces[4], pieces[2], pieces[8], pieces[6], pieces[5]].map((p) => p!),
  );
  await chunks.insertOne({ _id: new ObjectId(), tenant, exportId: new ObjectId(), n: 11, data: new Binary(Buffer.from('not this file')) });
  const again = await api('GET', `/api/exports/${v.id}/file`);
  t.equal(again.statusCode, 200);
  t.equal(createHash('sha256').update(again.rawPayload).digest('hex'), v.file!.sha256, 'the sha256 the export recorded');
  t.equal(again.rawPayload.length, bytes.length);
});

t.test("the 202's links, as the served document gives them, lead to the export and then to its file", async (t) => {
  type Link = { operationId: string; parameters: Record<string, string> };
  type Op = { operationId?: string; responses?: Record<string, { links?: Record<string, Link> }> };
  const doc = deref((await api('GET', '/docs/json', null)).json<Json>()) as unknown as { paths: Record<string, Record<string, Op>> };
  const links = Object.values(doc.paths['/api/exports/datasets/shipments']!.post!.responses!['202']!.links ?? {});
  const pathOfOperation = (id: string): string => Object.entries(doc.paths).find(([, item]) => item.get?.operationId === id)![0];
  const created = await api('POST', exportUrl('shipments', { format: 'csv' }));
  t.equal(created.statusCode, 202);
  const body = created.json<Record<string, unknown>>();
  /** A link's request, its parameters read from the 202 by their runtime expression (`$response.body#/<pointer>`, evaluated here). */
  const follow = (operationId: string) => {
    const link = links.find((l) => l.operationId === operationId)!;
    let url = pathOfOperation(operationId);
    for (const [name, expression] of Object.entries(link.parameters)) {
      const pointer = /^\$response\.body#\/(.+)$/.exec(expression)![1]!;
      url = url.replace(`{${name}}`, String(pointer.split('/').reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], body)));
    }
    return api('GET', url);
  };
  const got = await follow('getExport');
  t.equal(got.statusCode, 200);
  t.equal(got.json<ExportView>().id, body.id, 'getExport: the export just queued');
  const v = await ready(String(body.id));
  const file = await follow('getExportFile');
  t.equal(file.statusCode, 200, 'getExportFile, once ready: the file');
  t.equal(createHash('sha256').update(file.rawPayload).digest('hex'), v.file!.sha256);
});

t.test('export.ready reaches a webhook with a valid signature', async (t) => {
  const hook = await api('POST', '/api/webhooks', KEY, { url: receiverUrl, events: ['export.ready'], description: 'exports' });
  t.equal(hook.statusCode, 201, hook.body);
  const secret = hook.json<{ secret: string }>().secret;
  const v = await ready((await queueExport('received-docs', { format: 'csv' })).id);
  const d = await waitFor('the export.ready delivery', async () => deliveries.find((x) => x.body.includes(v.id)));
  t.equal(d.headers['x-freight-event-type'], 'export.ready');
  const sig = String(d.headers['x-freight-signature']);
  const ts = /t=(\d+)/.exec(sig)![1]!;
  const mac = createHmac('sha256', secret).update(`${ts}.${d.body}`).digest('hex');
  t.equal(/v1=([0-9a-f]+)/.exec(sig)![1], mac, 'HMAC-SHA256 over t.body with the endpoint secret');
  const event = JSON.parse(d.body) as { type: string; data: ExportView };
  t.equal(event.type, 'export.ready');
  t.equal(event.data.id, v.id);
  t.equal(event.data.download!.url, v.download!.url);
});

t.test('a zip of a period holds each XML byte for byte and a PDF per document', async (t) => {
  const files = ['files/cfdiutils-cfdi40-valid.xml', 'files/cfdiutils-cfdi33-real.xml'].map((f) => readFileSync(path.join(corpusDir(), f)));
  const byTenant = new Map<string, Buffer[]>();
  for (const bytes of files) {
    const rfc = /<(?:\w+:)?Emisor\b[^>]*?\sRfc="([^"]*)"/.exec(bytes.toString('utf8'))![1]!.replaceAll('&amp;', '&');
    byTenant.set(rfc, [...(byTenant.get(rfc) ?? []), bytes]);
  }
  const [tenant, mine] = [...byTenant][0]!;
  const key = (await createApiKey(h.db, tenant, 'exports zip')).key;
  for (const bytes of mine) {
    const r = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': key, 'content-type': 'application/xml' }, payload: bytes });
    t.equal(r.statusCode, 200);
  }
  const v = await ready((await queueExport('originals', { startDate: '2000-01-01', endDate: '2030-12-31', direction: 'issued' }, key)).id, key);
  const zip = await api('GET', `/api/exports/${v.id}/file`, key);
  t.equal(zip.headers['content-type'], 'application/zip');
  const entries = await unzip(zip.rawPayload);
  for (const bytes of mine) {
    const uuid = /TimbreFiscalDigital\b[^>]*?\sUUID="([^"]*)"/.exec(bytes.toString('utf8'))![1]!.toUpperCase();
    const xml = entries.get(`issued/${uuid}.xml`);
    t.ok(xml, `issued/${uuid}.xml`);
    t.equal(createHash('sha256').update(xml!).digest('hex'), createHash('sha256').update(bytes).digest('hex'), 'byte for byte');
    const pdf = entries.get(`issued/${uuid}.pdf`);
    t.ok(pdf && pdf.subarray(0, 5).toString('latin1') === '%PDF-', `issued/${uuid}.pdf is a PDF`);
  }
  t.equal(entries.size, mine.length * 2, 'an XML and a PDF per document, nothing else');

  // An end before the start is schema-valid: an empty period (as the lists answer it), never a 400.
  const empty = await ready((await queueExport('originals', { startDate: '2030-12-31', endDate: '2000-01-01' }, key)).id, key);
  t.equal(empty.progress.rows, 0);
  t.equal((await unzip((await api('GET', `/api/exports/${empty.id}/file`, key)).rawPayload)).size, 0, 'an empty zip');
});

t.test('the zip of a period holds every kind of CFDI kept, issued and received, by its Fecha, each once', async (t) => {
  const [tenant, client, supplier] = ['ZIP261001AB1', 'CLI261001CD2', 'SUP261001EF3'];
  const key = (await createApiKey(h.db, tenant, 'originals of every kind')).key;
  const U = (n: number): string => `0C7A1000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  const line = (desc: string, amount: number) => [{ code: '78101800', desc, amount, transfers: [{ tax: '002' as const, rate: 0.16 }] }];
  const invoice = (uuid: string, issuer: string, receiver: string, fecha: string) =>
    invoiceXml({ issuer, receiver, uuid, fecha, method: 'PPD', lines: line('Flete', 1000) }).xml;
  const creditNote = (uuid: string, invoiceUuid: string, fecha: string) =>
    invoiceXml({ issuer: tenant, receiver: client, uuid, fecha, lines: line('Bonificación', 100) })
      .xml.replace('TipoDeComprobante="I"', 'TipoDeComprobante="E"')
      .replace('<cfdi:Emisor', `<cfdi:CfdiRelacionados TipoRelacion="01"><cfdi:CfdiRelacionado UUID="${invoiceUuid}"/></cfdi:CfdiRelacionados><cfdi:Emisor`);
  const payment = (uuid: string, issuer: string, receiver: string, invoiceUuid: string, fecha: string, before: number) =>
    paymentXml({ issuer, receiver, uuid, fecha, invoiceUuid, currency: 'MXN', exchangeRate: 1, before, paid: 100 });
  // October 2026: the period. What is in it, by side, and what is not (dated the day before or the day after).
  const files: { uuid: string; side: 'issued' | 'received'; inPeriod: boolean; xml: string }[] = [
    { uuid: U(1), side: 'issued', inPeriod: true, xml: invoice(U(1), tenant, client, '2026-10-05T10:00:00') },
    // A complement's facts keep each payment's FechaPago, not its Fecha: this one at 23:30 on the period's last day is in.
    { uuid: U(2), side: 'issued', inPeriod: true, xml: payment(U(2), tenant, client, U(1), '2026-10-31T23:30:00', 1160) },
    { uuid: U(3), side: 'issued', inPeriod: true, xml: creditNote(U(3), U(1), '2026-10-12T09:00:00') },
    { uuid: U(4), side: 'issued', inPeriod: false, xml: creditNote(U(4), U(1), '2026-11-01T00:30:00') },
    { uuid: U(5), side: 'issued', inPeriod: false, xml: invoice(U(5), tenant, client, '2026-09-30T23:30:00') },
    { uuid: U(6), side: 'issued', inPeriod: false, xml: payment(U(6), tenant, client, U(5), '2026-09-30T23:59:00', 1160) },
    { uuid: U(7), side: 'received', inPeriod: true, xml: invoice(U(7), supplier, tenant, '2026-10-08T12:00:00') },
    { uuid: U(8), side: 'received', inPeriod: true, xml: payment(U(8), supplier, tenant, U(7), '2026-10-20T12:00:00', 1160) },
    { uuid: U(9), side: 'received', inPeriod: false, xml: payment(U(9), supplier, tenant, U(7), '2026-11-01T09:00:00', 1060) },
  ];
  for (const f of files) {
    const r = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': key, 'content-type': 'application/xml' }, payload: f.xml });
    t.equal(r.statusCode, 200, r.body.slice(0, 300));
    t.match(r.json(), { files: [{ status: 'created', direction: f.side, uuid: f.uuid }] }, `${f.uuid} imported`);
  }
  const expected = (side?: 'issued' | 'received') =>
    files
      .filter((f) => f.inPeriod && (side === undefined || f.side === side))
      .flatMap((f) => [`${f.side}/${f.uuid}.xml`, `${f.side}/${f.uuid}.pdf`])
      .sort();
  const check = async (t: Test, v: ExportView, side?: 'issued' | 'received'): Promise<string[]> => {
    const bytes = (await api('GET', `/api/exports/${v.id}/file`, key)).rawPayload;
    const names = await zipNames(bytes);
    t.same([...names].sort(), expected(side), 'exactly the CFDIs dated in the period, an XML and a PDF each, each once');
    t.equal(v.progress.rows, expected(side).length / 2, 'progress.rows counts the CFDIs');
    const entries = await unzip(bytes);
    for (const f of files.filter((f) => f.inPeriod && (side === undefined || f.side === side))) {
      t.ok(entries.get(`${f.side}/${f.uuid}.xml`)?.equals(Buffer.from(f.xml, 'utf8')), `${f.side}/${f.uuid}.xml byte for byte`);
      t.equal(entries.get(`${f.side}/${f.uuid}.pdf`)?.subarray(0, 5).toString('latin1'), '%PDF-', `${f.side}/${f.uuid}.pdf is a PDF`);
    }
    return names;
  };
  const october = { startDate: '2026-10-01', endDate: '2026-10-31' };
  const first = await check(t, await ready((await queueExport('originals', october, key)).id, key));
  const again = await check(t, await ready((await queueExport('originals', october, key)).id, key));
  t.same(again, first, 'the same entries in the same order');
  await check(t, await ready((await queueExport('originals', { ...october, direction: 'issued' }, key)).id, key), 'issued');
  await check(t, await ready((await queueExport('originals', { ...october, direction: 'received' }, key)).id, key), 'received');

  // The same through MCP: the exportOriginals tool queues it; the file is the one above.
  const base = await listen(h.app);
  const mcp = await connect(t, base, 'streamable', { 'x-api-key': key }, '?toolsets=exports');
  const made = (await mcp.callTool({ name: 'exportOriginals', arguments: october })) as unknown as { isError?: boolean; structuredContent?: ExportView };
  t.notOk(made.isError);
  t.same(await check(t, await ready(made.structuredContent!.id, key)), first, 'the same zip through MCP');
});

/** The entry names of a zip, in its order (duplicates kept). */
function zipNames(bytes: Buffer): Promise<string[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      const names: string[] = [];
      zip.on('entry', (entry: yauzl.Entry) => {
        names.push(entry.fileName);
        zip.readEntry();
      });
      zip.on('end', () => resolve(names));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

function unzip(bytes: Buffer): Promise<Map<string, Buffer>> {
  return new Promise((resolve, reject) => {
    const out = new Map<string, Buffer>();
    yauzl.fromBuffer(bytes, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error('no zip'));
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (e, stream) => {
          if (e || !stream) return reject(e ?? new Error('no stream'));
          const parts: Buffer[] = [];
          stream.on('data', (c: Buffer) => parts.push(c));
          stream.on('end', () => {
            out.set(entry.fileName, Buffer.concat(parts));
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.readEntry();
    });
  });
}

t.test('bad input is 400 in the documented shape', async (t) => {
  const cases: [dataset: string, query: Record<string, string>, detail: RegExp][] = [
    ['financial-docs', { format: 'csv', nope: '1' }, /nope/],
    ['financial-docs', { format: 'csv', paymentStatus: 'maybe' }, /paymentStatus/],
    ['financial-docs', { format: 'csv', limit: '5' }, /limit/],
    ['financial-docs', { format: 'zip' }, /format/],
    ['financial-docs', {}, /format/],
    ['tax-summary', { format: 'csv', table: 'data' }, /table/],
    ['originals', { startDate: '2026-02-30', endDate: '2026-03-01' }, /startDate/],
    ['originals', { startDate: '2026-02-01' }, /endDate/],
  ];
  for (const [dataset, query, detail] of cases) {
    const res = await api('POST', exportUrl(dataset, query));
    t.equal(res.statusCode, 400, `${dataset} ${JSON.stringify(query)}`);
    assertConforms(t, res, 'POST', `/api/exports/datasets/${dataset}`);
    t.match(res.json<{ error: { details: string[] } }>().error.details.join(' '), detail);
  }
  t.equal((await api('POST', exportUrl('nothing', { format: 'csv' }))).statusCode, 404, 'no such dataset: no such operation');
  t.equal((await api('GET', '/api/exports/6650f1c2a1b2c3d4e5f6c001')).statusCode, 404);
});

t.test('an export queued before a restart is built after it', async (t) => {
  await h.rebuild({ env: ENV, now, plugins: workers(false) });
  const v = await queueExport('alerts', { format: 'xlsx' });
  t.equal(v.status, 'queued');
  await sleep(300);
  t.equal((await api('GET', `/api/exports/${v.id}`)).json<ExportView>().status, 'queued', 'no worker: still queued');
  await h.rebuild({ env: ENV, now, plugins: workers(true) });
  await h.app.ready();
  const done = await ready(v.id);
  t.equal(done.file!.contentType, 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  const list = await api('GET', '/api/exports?limit=100');
  assertConforms(t, list, 'GET', '/api/exports');
  t.ok(list.json<{ data: ExportView[] }>().data.some((e) => e.id === v.id));
});

t.test('what a crash between two writes leaves is finished after the restart: a job never stored, an event never raised', async (t) => {
  const hook = await api('POST', '/api/webhooks', KEY, { url: `${receiverUrl}/crash`, events: ['export.ready'], description: 'crash windows' });
  t.equal(hook.statusCode, 201, hook.body);
  const hookId = hook.json<{ id: string }>().id;
  await h.rebuild({ env: ENV, now, plugins: workers(false) });
  // 1. The export's record stored, the process dead before its job: queued with no job.
  const lost = await queueExport('alerts', { format: 'csv' });
  await h.db.collection(COLLECTIONS.exportJobs).deleteOne({ _id: new ObjectId(lost.id) });
  // 2. A test send's delivery stored, the process dead before its job: pending with no job.
  const sent = await api('POST', `/api/webhooks/${hookId}/test`);
  t.equal(sent.statusCode, 202, sent.body);
  const pending = await h.db.collection(COLLECTIONS.webhookDeliveries).findOne({ webhookId: hookId, eventType: 'webhook.test' });
  await h.db.collection(COLLECTIONS.webhookJobs).deleteOne({ _id: pending!._id });
  // The restart: the workers start.
  await h.rebuild({ env: ENV, now, plugins: workers(true) });
  await h.app.ready();
  const built = await ready(lost.id);
  t.equal(built.status, 'ready', 'the export whose job was never stored is built');
  const deliveredOf = async (eventType: string) =>
    (await api('GET', `/api/webhooks/${hookId}/deliveries?limit=100`))
      .json<{ data: { eventType: string; status: string }[] }>()
      .data.filter((d) => d.eventType === eventType);
  t.match(await waitFor('the test delivery', async () => (await deliveredOf('webhook.test')).find((d) => d.status === 'succeeded')), { status: 'succeeded' });
  const readyDelivery = await waitFor('the export.ready delivery', async () => deliveries.find((x) => x.body.includes(lost.id)));
  t.ok(readyDelivery, 'and its export.ready raised');
  // 3. The export marked ready, the process dead before its event: the job runs again (its lock expired) and raises it.
  const raised = await h.db.collection(COLLECTIONS.webhookDeliveries).find({ webhookId: hookId, eventType: 'export.ready' }).toArray();
  await h.db.collection(COLLECTIONS.webhookDeliveries).deleteMany({ _id: { $in: raised.map((d) => d._id) } });
  await h.db.collection(COLLECTIONS.webhookJobs).deleteMany({ _id: { $in: raised.map((d) => d._id) } });
  const before = deliveries.length;
  await h.db.collection(COLLECTIONS.exportJobs).updateOne({ _id: new ObjectId(lost.id) }, { $set: { nextRunAt: new Date(), lockedAt: null } });
  // Waited for as the service lists it, not as the receiver saw it: an attempt of the delivery just deleted may still
  // reach the receiver (its job was running), which says nothing of the event raised again.
  await waitFor('export.ready raised again', async () => (await deliveredOf('export.ready')).find((d) => d.status === 'succeeded'));
  t.ok(
    deliveries.slice(before).some((x) => x.body.includes(lost.id)),
    'the receiver got it',
  );
  t.equal((await deliveredOf('export.ready')).length, 1, 'one delivery of the event');
});

t.test("CSV: a text opening as a formula (= + - @ TAB CR LF) is prefixed with ', numbers stay numbers; the XLSX keeps it plain text", async (t) => {
  // A supplier's CFDI (third-party XML) whose Emisor Nombre is a formula, and the supplier's credit note on it: in
  // the October VAT lines (creditableVat) its name is `partyName`, and the credit note's share is a negative amount.
  const [tenant, supplier] = ['INJ261001AB1', 'SUP261001GH4'];
  const key = (await createApiKey(h.db, tenant, 'csv injection')).key;
  const formula = '=HYPERLINK("http://x","y")';
  const [invoiceUuid, noteUuid] = ['C5A00000-0000-4000-8000-000000000001', 'C5A00000-0000-4000-8000-000000000002'];
  const lines = (amount: number) => [{ desc: 'Flete', amount, transfers: [{ tax: '002' as const, rate: 0.16 }] }];
  const invoice = invoiceXml({
    issuer: supplier,
    issuerName: formula,
    receiver: tenant,
    uuid: invoiceUuid,
    fecha: '2026-10-07T10:00:00',
    lines: lines(500),
  }).xml;
  const note = invoiceXml({ issuer: supplier, issuerName: formula, receiver: tenant, uuid: noteUuid, fecha: '2026-10-08T10:00:00', lines: lines(50) })
    .xml.replace('TipoDeComprobante="I"', 'TipoDeComprobante="E"')
    .replace('<cfdi:Emisor', `<cfdi:CfdiRelacionados TipoRelacion="01"><cfdi:CfdiRelacionado UUID="${invoiceUuid}"/></cfdi:CfdiRelacionados><cfdi:Emisor`);
  for (const xml of [invoice, note]) {
    const r = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': key, 'content-type': 'application/xml' }, payload: xml });
    t.equal(r.statusCode, 200, r.body.slice(0, 300));
  }
  const query = { month: '2026-10', figure: 'creditableVat' };
  const csv = await ready((await queueExport('tax-position-lines', { format: 'csv', ...query }, key)).id, key);
  const body = (await api('GET', `/api/exports/${csv.id}/file`, key)).body;
  // By hand: 500 + 16 % VAT = 580 paid (PUE), VAT 80; the note 50 + 8 = 58, a share of 58 / 580 = 0.1 of the VAT, −8.
  const name = `"'=HYPERLINK(""http://x"",""y"")"`;
  t.equal(
    body,
    'side,docId,uuid,party,partyName,paymentMethod,settlement,paymentUuid,payments,date,paid,share,amount,reason\r\n' +
      `received,${tenant}-RCFDI-${invoiceUuid},${invoiceUuid},${supplier},${name},PUE,pue,,1,2026-10-07T16:00:00.000Z,580,1,80,\r\n` +
      `received,${tenant}-RCFDI-${invoiceUuid},${invoiceUuid},${supplier},${name},PUE,creditNote,${noteUuid},0,2026-10-08T16:00:00.000Z,58,0.1,-8,\r\n`,
    "the name prefixed with ' and quoted per RFC 4180; the negative amount as it is",
  );
  const [, row]: string[][] = parseCsv(body);
  t.equal(row![4], `'=HYPERLINK("http://x","y")`, 'the cell a spreadsheet reads: text');

  // The XLSX: a string cell (t="str", a <v>, never an <f>), the name as sent; the amount a number.
  const x = await ready((await queueExport('tax-position-lines', { format: 'xlsx', ...query }, key)).id, key);
  const file = (await api('GET', `/api/exports/${x.id}/file`, key)).rawPayload;
  const sheetXml = (await unzip(file)).get('xl/worksheets/sheet1.xml')!.toString('utf8');
  t.notMatch(sheetXml, /<f[\s>]/, 'no formula in the sheet');
  t.match(sheetXml, /<c r="E2" t="str"><v>=HYPERLINK\(&quot;http:\/\/x&quot;,&quot;y&quot;\)<\/v><\/c>/, 'the name a string cell, unprefixed');
  const [sheet] = await readXlsx(file);
  t.same(
    sheet!.data.slice(1).map((r) => [r[4], r[12]]),
    [
      [formula, 80],
      [formula, -8],
    ],
    'read back: the name as sent, the amounts numbers',
  );

  // Each character OWASP lists, and what stays as it is.
  const cases: [cell: string | number | boolean | null, field: string][] = [
    ['=1+2', "'=1+2"],
    ['+52 55 1234', "'+52 55 1234"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\t=1', "'\t=1"],
    ['\r=1', `"'\r=1"`],
    ['\n=1', `"'\n=1"`],
    ['=1+2";=1+2', `"'=1+2"";=1+2"`],
    ['a=b', 'a=b'],
    [' =1', ' =1'],
    ['', ''],
    [-8, '-8'],
    [-0.5, '-0.5'],
    [false, 'false'],
    [null, ''],
  ];
  for (const [cell, field] of cases) t.equal(csvField(cell), field, JSON.stringify(cell));
});

t.test('XLSX text reads back exactly (ECMA-376 _xHHHH_ escapes); a text over Excel\'s 32,767 characters is cut with "…"', async (t) => {
  // Characters XML 1.0 cannot hold or changes (controls, CR, U+FFFE/U+FFFF), and a literal escape-like text.
  const names = ['x\uFFFEy\uFFFFz', 'line1\r\nline2\rline3', 'a\u0001b\u0008c\u000Bd\u001Fe\tf', 'costo _x0041_ y _x005F_'];
  for (const [i, nameAlert] of names.entries()) {
    const res = await api('POST', '/api/alerts/schedule', KEY, { userIds: [`u-xlsx-${i}`], ruleId: 'overdue-invoices', cycleKey: '2026-03', nameAlert });
    t.equal(res.statusCode, 200, res.body);
  }
  const jobs = await ready((await queueExport('alert-jobs', { format: 'xlsx' })).id);
  const file = (await api('GET', `/api/exports/${jobs.id}/file`)).rawPayload;
  // Well-formed XML 1.0 (its Char production), and no CR for a parser to turn into LF: what Excel requires.
  const sheetXml = (await unzip(file)).get('xl/worksheets/sheet1.xml')!.toString('utf8');
  // eslint-disable-next-line no-control-regex -- the characters XML 1.0 excludes
  t.notMatch(sheetXml, /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF\r]/, 'the sheet is well-formed XML 1.0');
  const [sheet] = await readXlsx(file);
  const column = sheet!.data[0]!.indexOf('nameAlert');
  t.ok(column >= 0);
  const cells = sheet!.data.slice(1).map((row) => row[column]);
  for (const name of names) t.ok(cells.includes(name), `read back as sent: ${JSON.stringify(name)}`);

  // A supplier's name of 40,000 characters (the CFDI takes it): the XLSX cell holds the first 32,766 and "…".
  const long = `${'Transportes '.repeat(3_333)}FIN`;
  const { xml } = invoiceXml({
    issuer: 'AAA010101AAA',
    issuerName: long,
    receiver: demo.rfc,
    uuid: 'B0000001-1111-4111-8111-111111111111',
    fecha: '2026-10-05T10:00:00',
    lines: [{ desc: 'Servicio', amount: 100 }],
  });
  const imported = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': KEY, 'content-type': 'application/xml' }, payload: xml });
  t.equal(imported.statusCode, 200, imported.body.slice(0, 300));
  const received = await ready((await queueExport('received-docs', { format: 'xlsx' })).id);
  const [docs] = await readXlsx((await api('GET', `/api/exports/${received.id}/file`)).rawPayload);
  const name = docs!.data
    .slice(1)
    .map((row) => row[docs!.data[0]!.indexOf('supplier.name')])
    .find((v) => typeof v === 'string' && v.startsWith('Transportes'));
  t.equal(long.length, 39_999);
  t.equal(name, `${long.slice(0, 32_766)}…`, "cut at Excel's limit, and says so");
  const csv = await ready((await queueExport('received-docs', { format: 'csv' })).id);
  t.ok((await api('GET', `/api/exports/${csv.id}/file`)).body.includes(long), 'the CSV holds it whole');
});

t.test('MCP: the exports toolset answers a resource link that reads back', async (t) => {
  const base = await listen(h.app);
  const byDefault = await connect(t, base, 'streamable', { 'x-api-key': KEY });
  t.notOk(
    (await byDefault.listTools()).tools.some((tool) => tool.name === 'getExport'),
    'not in the default catalogue',
  );
  const client = await connect(t, base, 'streamable', { 'x-api-key': KEY }, '?toolsets=exports');
  t.same(
    (await client.listTools()).tools.map((tool) => tool.name).sort(),
    [...exportOperations().map((o) => o.operationId), 'getExport', 'listExports'].sort(),
    'a tool per dataset, and the export itself',
  );
  const made = (await client.callTool({ name: 'exportFinancialDocs', arguments: { format: 'csv', ...FILTER } })) as unknown as {
    isError?: boolean;
    structuredContent?: ExportView & { query: unknown };
  };
  t.notOk(made.isError);
  t.same(made.structuredContent?.query, FILTER, 'the filters as the REST operation takes them');
  const v = await ready(made.structuredContent!.id);
  const res = (await client.callTool({ name: 'getExport', arguments: { id: v.id } })) as unknown as {
    content: { type: string; uri?: string; name?: string; text?: string }[];
  };
  const link = res.content.find((c) => c.type === 'resource_link');
  t.match(link, { uri: v.download!.url, name: v.file!.name });
  const fetched = await fetch(new URL(pathOf(link!.uri!), base));
  t.equal(fetched.status, 200);
  t.equal(
    createHash('sha256')
      .update(Buffer.from(await fetched.arrayBuffer()))
      .digest('hex'),
    v.file!.sha256,
  );
  t.ok(validators['GET /api/exports/:id response:200'], 'the answer is typed in the spec');
});

t.test('a file whose store fails part-way (the database away) fails the run, never the process: CSV, XLSX and zip', async (t) => {
  // A sink like chunk-sink.ts whose store fails on its second write, after the writer has moved on (as an insert does):
  // nothing is waiting on the stream then, so an error nobody listens for would end the whole service.
  const failingSink = (highWaterMark: number) => {
    let writes = 0;
    return new Writable({
      highWaterMark,
      write(_chunk, _encoding, callback) {
        writes++;
        setTimeout(() => callback(writes === 2 ? new Error('exportChunks: the database is away') : undefined), 2);
      },
    });
  };
  async function* rows(): AsyncGenerator<readonly ExportCell[]> {
    for (let i = 0; i < 3000; i++) {
      yield [i, `fila ${i} ${'x'.repeat(200)}`];
      if (i % 50 === 0) await sleep(2);
    }
  }
  const table = (): ExportTable => ({
    name: 'data',
    columns: [
      { name: 'n', description: '' },
      { name: 's', description: '' },
    ],
    rows: rows(),
  });
  const counted = async () => undefined;
  for (const highWaterMark of [1024, 10_000_000]) {
    await t.rejects(writeCsv(table(), failingSink(highWaterMark), counted), /database is away/, `CSV (high-water mark ${highWaterMark})`);
    await t.rejects(writeXlsx([table()], failingSink(highWaterMark), counted), /database is away/, `XLSX (high-water mark ${highWaterMark})`);
  }
  // The zip of a period with a few CFDIs: the store fails while its entries are written.
  const tenant = 'SNK261001AB1';
  const key = (await createApiKey(h.db, tenant, 'sink failure')).key;
  for (let n = 1; n <= 3; n++) {
    const { xml } = invoiceXml({
      issuer: tenant,
      receiver: 'CLI261001CD2',
      uuid: `5A1C0000-0000-4000-8000-${String(n).padStart(12, '0')}`,
      fecha: '2026-10-05T10:00:00',
      lines: [{ desc: 'Flete', amount: 1000 }],
    });
    const r = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': key, 'content-type': 'application/xml' }, payload: xml });
    t.equal(r.statusCode, 200, r.body.slice(0, 300));
  }
  const ctx = { db: h.db, tenant, now: now(), config: h.config };
  await t.rejects(
    writeOriginalsZip(ctx, { startDate: '2026-10-01', endDate: '2026-10-31', direction: 'all' }, failingSink(1024), counted),
    /database is away/,
    'zip',
  );
});
