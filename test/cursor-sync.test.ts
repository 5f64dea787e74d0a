/**
 * Incremental sync and keyset cursors through HTTP and MCP: `updatedSince`
 * filters and orders by lastUpdate then id; `cursor` continues a walk at flat
 * cost; cursors are opaque and tamper-evident, bound to tenant, list, sort and
 * filters. The big case walks 30,000 documents while they are being changed:
 * nothing that was not touched is skipped or repeated.
 */
import t from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from './helpers/harness.ts';
import { connect, listen } from './helpers/mcp.ts';
import { makeFinancialDoc, makeTrip, leg, diesel, freight } from './fixtures/documents.ts';
import { financialDocs } from '../lib/db/collections.ts';
import { withDerivedFields } from '../lib/finance/derived-fields.ts';
import type { FinancialDocument } from '../lib/model/financial-document.ts';
import { insertTrips } from './fixtures/stored-trips.ts';

t.setTimeout(600_000);
// On the indexed on-disk store: the 30,000-document walk reads pages through the indexes, as `npm start` does.
const h = await startHarness(t, { onDisk: true });

const iso = (ms: number) => new Date(ms).toISOString();
const T0 = Date.parse('2026-03-01T00:00:00.000Z');

// Small data set: 7 documents of A with known emission and update instants, 2 of B.
const small = Array.from({ length: 7 }, (_, i) =>
  makeFinancialDoc({
    tenant: TENANT_A,
    date: `2026-02-${String(10 + i).padStart(2, '0')}T10:00`,
    concepts: [freight(1000 + i)],
    lastUpdate: iso(T0 + ((i * 3) % 7) * 60_000),
  }),
);
// Two share one lastUpdate: the id breaks the tie.
small[5]!.lastUpdate = small[6]!.lastUpdate;
const smallB = [0, 1].map(() => makeFinancialDoc({ tenant: TENANT_B, concepts: [freight(500)] }));
await financialDocs(h.db).insertMany([...small, ...smallB].map(withDerivedFields));
const tripList = [0, 1, 2].map((i) => ({
  ...makeTrip({ tenant: TENANT_A, legs: [leg({ products: [diesel(20_000, 19_990)] })] }),
  lastUpdate: iso(T0 + (3 - i) * 1000),
}));
await insertTrips(h.db, [...tripList, { ...makeTrip({ tenant: TENANT_A, legs: [leg({ products: [diesel(1, 1)] })] }) }]);

const get = (url: string, key = KEY_A) => h.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
type Page = {
  meta: { total: number; page: number; pages: number; hasMore: boolean; nextCursor: string | null };
  data: { id: string; dates?: { lastUpdate: string } }[];
};

async function walk(base: string, key = KEY_A): Promise<{ ids: string[]; pages: Page[] }> {
  const ids: string[] = [];
  const pages: Page[] = [];
  let url = base;
  for (let i = 0; i < 1000; i += 1) {
    const res = await get(url, key);
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
    const page = res.json<Page>();
    pages.push(page);
    ids.push(...page.data.map((d) => d.id));
    if (!page.meta.nextCursor) break;
    url = `${base}${base.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(page.meta.nextCursor)}`;
  }
  return { ids, pages };
}

t.test('a cursor walk returns what page by page returns, with meta along the walk', async (t) => {
  const byPage = (await get('/api/financial-docs?limit=100')).json<Page>();
  const { ids, pages } = await walk('/api/financial-docs?limit=3');
  t.same(
    ids,
    byPage.data.map((d) => d.id),
    'same documents, same order (4.1 sort, id tie-breaker)',
  );
  t.same(
    pages.map((p) => p.meta.page),
    [1, 2, 3],
  );
  t.ok(
    pages.every((p) => p.meta.total === 7 && p.meta.pages === 3),
    'total and pages as counted on the first page',
  );
  t.same(
    pages.map((p) => p.meta.hasMore),
    [true, true, false],
  );
  t.equal(pages[2]!.meta.nextCursor, null);
  const second = await get(`/api/financial-docs?limit=3&cursor=${encodeURIComponent(pages[0]!.meta.nextCursor!)}`);
  assertConforms(t, second, 'GET', '/api/financial-docs');
  const fromPage2 = (await get('/api/financial-docs?limit=3&page=2')).json<Page>();
  t.ok(fromPage2.meta.nextCursor, 'an offset page carries a cursor too');
  const after = (await get(`/api/financial-docs?limit=3&cursor=${encodeURIComponent(fromPage2.meta.nextCursor!)}`)).json<Page>();
  t.same(
    after.data.map((d) => d.id),
    ids.slice(6),
    'switching from page to cursor continues in place',
  );
  t.equal(after.meta.page, 3);
  const full = await walk('/api/financial-docs?limit=2&detail=full');
  t.equal(full.ids.length, 7);
});

t.test('a walk that changes its limit: page counts the pages walked, pages adds those left at the new limit', async (t) => {
  const all = (await get('/api/financial-docs?limit=100')).json<Page>().data.map((d) => d.id);
  const first = (await get('/api/financial-docs?limit=2')).json<Page>();
  t.match(first.meta, { total: 7, page: 1, pages: 4 });
  const next = (limit: number, p: Page) => get(`/api/financial-docs?limit=${limit}&cursor=${encodeURIComponent(p.meta.nextCursor!)}`);
  // 2 walked, 5 left: at 3 a page, 2 more pages (3 + 2): page 2 of 3.
  const second = (await next(3, first)).json<Page>();
  t.same(
    second.data.map((d) => d.id),
    all.slice(2, 5),
  );
  t.match(second.meta, { total: 7, page: 2, pages: 3, hasMore: true });
  // 5 walked, 2 left: at 1 a page, 2 more: page 3 of 4; then 6 walked, 1 left at 5: page 4 of 4, the last.
  const third = (await next(1, second)).json<Page>();
  t.same(
    third.data.map((d) => d.id),
    all.slice(5, 6),
  );
  t.match(third.meta, { page: 3, pages: 4, hasMore: true });
  const fourth = (await next(5, third)).json<Page>();
  t.same(
    fourth.data.map((d) => d.id),
    all.slice(6),
  );
  t.match(fourth.meta, { page: 4, pages: 4, hasMore: false, nextCursor: null });
  // The same limit all along: as before, pages is the total over the limit.
  const same = (await next(2, first)).json<Page>();
  t.match(same.meta, { page: 2, pages: 4 });
});

t.test('updatedSince: at or after the instant, oldest change first, id breaks ties', async (t) => {
  const since = iso(T0 + 2 * 60_000);
  const expected = small
    .filter((d) => d.lastUpdate >= since)
    .sort((a, b) => (a.lastUpdate === b.lastUpdate ? (a._id < b._id ? -1 : 1) : a.lastUpdate < b.lastUpdate ? -1 : 1))
    .map((d) => d.id);
  const res = await get(`/api/financial-docs?updatedSince=${since}&limit=100`);
  t.equal(res.statusCode, 200);
  assertConforms(t, res, 'GET', '/api/financial-docs');
  t.same(
    res.json<Page>().data.map((d) => d.id),
    expected,
  );
  t.ok(expected.length >= 3 && expected.length < 7);
  const walked = await walk(`/api/financial-docs?updatedSince=${encodeURIComponent('2026-03-01T00:02:00+00:00')}&limit=2`);
  t.same(walked.ids, expected, 'the same through a cursor walk; an offset is read as the same instant');
  // An offset of whole hours (the date-time format admits `+05`; Date.parse does not): 05:02 at UTC+5 is 00:02Z.
  const hours = await get(`/api/financial-docs?updatedSince=${encodeURIComponent('2026-03-01T05:02:00+05')}&limit=100`);
  t.equal(hours.statusCode, 200, hours.body);
  t.same(
    hours.json<Page>().data.map((d) => d.id),
    expected,
    'an offset of whole hours',
  );
  const trip = await get(`/api/shipments?updatedSince=${iso(T0 + 2000)}&limit=100`);
  t.equal(trip.statusCode, 200);
  assertConforms(t, trip, 'GET', '/api/shipments');
  t.same(
    trip.json<Page>().data.map((d) => d.id),
    [tripList[1]!._id, tripList[0]!._id],
    'trips: by lastUpdate; trips without one only without the filter',
  );
  t.equal(trip.json<{ data: { lastUpdate: string }[] }>().data[0]!.lastUpdate, tripList[1]!.lastUpdate, 'summary carries lastUpdate');
  const tripWalk = await walk('/api/shipments?limit=1');
  t.equal(tripWalk.ids.length, 4, 'shipments walk by cursor too');
  for (const bad of ['yesterday', '2026-03-01', '2026-13-01T00:00:00Z']) {
    const r = await get(`/api/financial-docs?updatedSince=${bad}`);
    t.equal(r.statusCode, 400, `updatedSince=${bad}`);
  }
  // The last instants RFC 3339 can write, some of them (offset west of UTC) in year 10000: nothing changed since.
  for (const late of ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59-12:00', '9999-12-31T23:59:59.999-00:01']) {
    for (const list of ['/api/financial-docs', '/api/shipments']) {
      const r = await get(`${list}?updatedSince=${encodeURIComponent(late)}`);
      t.equal(r.statusCode, 200, `${list} updatedSince=${late}`);
      t.same(r.json<Page>().data, [], `${list} updatedSince=${late}: nothing`);
    }
  }
});

t.test('cursors are tamper-evident and bound to tenant, list, sort and filters', async (t) => {
  const first = (await get('/api/financial-docs?limit=2')).json<Page>();
  const cursor = first.meta.nextCursor!;
  const [body, sig] = cursor.split('.') as [string, string];
  const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { t: string; k: unknown[] };
  const forged = Buffer.from(JSON.stringify({ ...payload, t: TENANT_B }), 'utf8').toString('base64url');
  // Not in the form the schema states: 400 (the schema rejects them).
  const malformed: [string, string][] = [
    ['garbage with a dot', 'abc.def'],
    ['not the documented form', 'not a cursor'],
    ['empty', ''],
    ['a signature one character short', `${body}.${sig.slice(0, -1)}`],
  ];
  for (const [name, c] of malformed) {
    const res = await get(`/api/financial-docs?limit=2&cursor=${encodeURIComponent(c)}`);
    t.equal(res.statusCode, 400, name);
    assertConforms(t, res, 'GET', '/api/financial-docs');
  }
  // In that form but not issued for this walk: 404, like another tenant's id (see the spec's Cursor).
  const unknown: [string, string][] = [
    ['forged payload with the old signature', `${forged}.${sig}`],
    ['flipped signature', `${body}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`],
    // The last character holds 2 bits no byte uses (RFC 4648 §3.5): a decoder reads three other spellings as the same bytes.
    ...[...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_']
      .filter((c) => c !== sig.at(-1))
      .map((c): [string, string] => [`the signature's last character as ${c}`, `${body}.${sig.slice(0, -1)}${c}`]),
  ];
  for (const [name, c] of unknown) {
    const res = await get(`/api/financial-docs?limit=2&cursor=${encodeURIComponent(c)}`);
    t.equal(res.statusCode, 404, name);
    t.match(res.json().error.details[0], /signature mismatch/);
    assertConforms(t, res, 'GET', '/api/financial-docs');
  }
  t.match(cursor, /^eyJ2IjoxLCJsIjoi[A-Za-z0-9_-]{40,1988}\.[A-Za-z0-9_-]{43}$/, 'issued cursors have the documented form');
  const foreign = await get(`/api/financial-docs?limit=2&cursor=${encodeURIComponent(cursor)}`, KEY_B);
  t.equal(foreign.statusCode, 404, "another tenant's key cannot use A's cursor");
  t.notMatch(foreign.body, TENANT_A, 'and learns nothing of A');
  const otherFilters = await get(`/api/financial-docs?limit=2&client=${small[0]!.client}&cursor=${encodeURIComponent(cursor)}`);
  t.equal(otherFilters.statusCode, 404, 'other filters');
  t.match(otherFilters.json().error.details[0], /other filters/);
  const otherList = await get(`/api/shipments?limit=2&cursor=${encodeURIComponent(cursor)}`);
  t.equal(otherList.statusCode, 404, 'another list');
  assertConforms(t, otherList, 'GET', '/api/shipments');
  const sync = (await get(`/api/financial-docs?limit=2&updatedSince=${iso(T0)}`)).json<Page>();
  t.equal(
    (await get(`/api/financial-docs?limit=2&cursor=${encodeURIComponent(sync.meta.nextCursor!)}`)).statusCode,
    404,
    'a sync cursor without its updatedSince',
  );
  t.equal((await get(`/api/financial-docs?limit=2&page=2&cursor=${encodeURIComponent(cursor)}`)).statusCode, 400, 'cursor with page');
  t.equal(
    (await get(`/api/financial-docs?limit=2&page=2&cursor=${encodeURIComponent(`${forged}.${sig}`)}`)).statusCode,
    404,
    'a forged cursor is 404 whatever else is asked',
  );
  const ok = await get(`/api/financial-docs?limit=5&detail=full&cursor=${encodeURIComponent(cursor)}`);
  t.equal(ok.statusCode, 200, 'limit and detail may change along a walk');
  t.equal(ok.json<Page>().data.length, 5);
});

t.test('MCP: the list tools walk with cursor and updatedSince too', async (t) => {
  const base = await listen(h.app);
  const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const res = await client.callTool({ name: 'listFinancialDocs', arguments: { limit: 3, updatedSince: iso(T0), ...(cursor ? { cursor } : {}) } });
    t.notOk(res.isError);
    const page = res.structuredContent as Page;
    ids.push(...page.data.map((d) => d.id));
    cursor = page.meta.nextCursor ?? undefined;
  } while (cursor);
  t.same(ids, (await walk(`/api/financial-docs?limit=100&updatedSince=${iso(T0)}`)).ids);
  const late = await client.callTool({ name: 'listFinancialDocs', arguments: { updatedSince: '9999-12-31T23:59:59-12:00' } });
  t.same((late.structuredContent as Page).data, [], 'an instant in year 10000: nothing changed since');
  // A walk that changes its limit (7 documents): 2 walked, 5 left at 1 a page: page 2 of 6.
  const first = (await client.callTool({ name: 'listFinancialDocs', arguments: { limit: 2, updatedSince: iso(T0) } })).structuredContent as Page;
  const second = (await client.callTool({ name: 'listFinancialDocs', arguments: { limit: 1, updatedSince: iso(T0), cursor: first.meta.nextCursor } }))
    .structuredContent as Page;
  t.match(second.meta, { total: 7, page: 2, pages: 6 });
  t.same(
    second.data.map((d) => d.id),
    ids.slice(2, 3),
  );
  const bad = await client.callTool({ name: 'listShipments', arguments: { cursor: 'abc.def' } });
  t.equal(bad.isError, true);
  t.equal((bad.structuredContent as { error: { code: number } }).error.code, 400);
});

t.test('30,000 documents: a cursor walk while documents change skips and repeats none of the untouched', async (t) => {
  await financialDocs(h.db).deleteMany({});
  const N = 30_000;
  // A tenth of them (3,000) belong to one client: the 4.1-order walk runs on those, to keep the suite fast on the embedded engine.
  const SMALL_CLIENT = 'SUB010101AB1';
  const template = makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(1000)] });
  const day = 86_400_000;
  const docs: FinancialDocument[] = Array.from({ length: N }, (_, i) => {
    const id = `BIG-${String(i).padStart(6, '0')}`;
    // Many documents share an emission instant and a lastUpdate: the tie-breakers are exercised.
    const date = T0 - Math.floor(i / 7) * day;
    return {
      ...template,
      _id: id,
      id,
      client: i % 10 === 0 ? SMALL_CLIENT : template.client,
      date,
      timestamp: date + (i % 3) * 1000,
      lastUpdate: iso(T0 + Math.floor(i / 5) * 1000),
      invoice: { ...template.invoice, uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` },
    };
  });
  const started = Date.now();
  for (let i = 0; i < N; i += 5000) await financialDocs(h.db).insertMany(docs.slice(i, i + 5000).map(withDerivedFields), { ordered: false });
  t.equal(await financialDocs(h.db).countDocuments({ company: TENANT_A }), N);
  t.comment(`${N} documents inserted in ${Date.now() - started} ms`);

  let seq = 0;
  /** Between pages: a few documents anywhere are changed (the sort keys of both orders move), one is deleted, one inserted. */
  async function churn(touched: Set<string>): Promise<void> {
    seq += 1;
    // Spread over the whole set, and one of the walked client's documents each time.
    const big = (k: number) => `BIG-${String(k % N).padStart(6, '0')}`;
    const picks = [big(seq * 7919), big(seq * 7919 + 104_729), big(((seq * 7) % (N / 10)) * 10), big(seq * 7919 + 2 * 104_729)];
    picks.forEach((id) => touched.add(id));
    const now = iso(T0 + 10 * 365 * day + seq * 1000);
    await financialDocs(h.db).updateMany({ _id: { $in: picks.slice(0, 3) } }, { $set: { lastUpdate: now, status: 6 }, $inc: { date: day * 3 } });
    await financialDocs(h.db).deleteOne({ _id: picks[3]! });
    const added = `NEW-${seq}`;
    touched.add(added);
    await financialDocs(h.db).insertOne(
      withDerivedFields({
        ...template,
        _id: added,
        id: added,
        client: seq % 2 ? SMALL_CLIENT : template.client,
        date: T0 - (seq % 4000) * day,
        lastUpdate: now,
      }),
    );
  }

  for (const [name, query, scope, size] of [
    ['sync order (updatedSince), all 30,000', `/api/financial-docs?limit=100&detail=full&updatedSince=${iso(0)}`, {}, N],
    ['4.1 order, one client (3,000)', `/api/financial-docs?limit=100&detail=full&client=${SMALL_CLIENT}`, { client: SMALL_CLIENT }, N / 10],
  ] as const) {
    const touched = new Set<string>();
    const untouchedBefore = new Set(
      (
        await financialDocs(h.db)
          .find({ company: TENANT_A, ...scope }, { projection: { _id: 1 } })
          .toArray()
      ).map((d) => d._id),
    );
    const seen = new Map<string, number>();
    let url: string = query;
    let pages = 0;
    const walkStarted = Date.now();
    for (;;) {
      const res = await get(url);
      if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      const page = res.json<{ meta: Page['meta']; data: FinancialDocument[] }>();
      pages += 1;
      for (const d of page.data) seen.set(d.id, (seen.get(d.id) ?? 0) + 1);
      if (!page.meta.nextCursor) break;
      await churn(touched);
      url = `${query}&cursor=${encodeURIComponent(page.meta.nextCursor)}`;
    }
    t.comment(`${name}: ${pages} pages in ${Date.now() - walkStarted} ms`);
    const untouched = [...untouchedBefore].filter((id) => !touched.has(id));
    const missing = untouched.filter((id) => !seen.has(id));
    const repeated = untouched.filter((id) => (seen.get(id) ?? 0) > 1);
    t.ok(pages >= size / 100 - 10, `${name}: ${pages} pages walked, ${touched.size} documents touched meanwhile`);
    t.ok(untouched.length > size * 0.9, `${untouched.length} untouched documents`);
    t.same(missing.slice(0, 5), [], `${name}: no untouched document skipped (${missing.length})`);
    t.same(repeated.slice(0, 5), [], `${name}: no untouched document repeated (${repeated.length})`);
  }
});
