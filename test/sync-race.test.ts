/**
 * Incremental sync while writes are in flight (lib/db/writes-in-flight.ts): an import batch
 * stamps its records when it starts and commits them later. A sync that reads meanwhile, after
 * a later write committed, must still find the batch's records on its next run when it resumes
 * from `meta.syncFrom`; keeping the largest `lastUpdate` seen (the procedure documented before)
 * misses them for good. Deterministic: the clock is the test's, and the import is held between
 * its stamp and its commit by a gate on the trips collection's bulk write (instrumentation only:
 * the database is the real embedded engine).
 */
import t from 'tap';
import type { Collection, Db } from 'mongodb';
import { startHarness, KEY_A, TENANT_A, TENANT_B } from './helpers/harness.ts';
import { connect, listen } from './helpers/mcp.ts';
import { cartaPorteXml, ONE_DRIVER, ONE_PLATE } from './helpers/carta-porte-xml.ts';
import { BASE, DAY, HOUR } from './helpers/differential-days.ts';
import { COLLECTIONS, trips } from '../lib/db/collections.ts';
import { SYNC_CLOCK_MARGIN_MS, SYNC_WRITES_IN_FLIGHT, syncFrom, withSyncStamp } from '../lib/db/writes-in-flight.ts';

t.setTimeout(300_000);

/** The test's clock: every `now` of the service reads it. */
let clock = BASE + 100 * DAY;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The harness's database with one seam: `hold(collection)` makes the next bulk write on that
 * collection wait until released (`entered` resolves once it waits). Everything else is the
 * real driver on the real database.
 */
function gated(db: Db) {
  let armed: { collection: string; entered: () => void; release: Promise<void> } | null = null;
  const bind = <T extends object>(target: T, prop: string | symbol) => {
    const v = Reflect.get(target, prop, target) as unknown;
    return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
  };
  const collection = (c: Collection) =>
    new Proxy(c, {
      get(target, prop) {
        if (prop !== 'bulkWrite') return bind(target, prop);
        return async (...args: Parameters<Collection['bulkWrite']>) => {
          const gate = armed;
          if (gate && gate.collection === target.collectionName) {
            armed = null;
            gate.entered();
            await gate.release;
          }
          return target.bulkWrite(...args);
        };
      },
    });
  const proxy = new Proxy(db, {
    get(target, prop) {
      if (prop === 'collection') return (name: string, opts?: object) => collection(target.collection(name, opts));
      return bind(target, prop);
    },
  });
  return {
    db: proxy,
    hold(name: string) {
      let entered!: () => void;
      let release!: () => void;
      const gate = {
        entered: new Promise<void>((r) => (entered = r)),
        release: new Promise<void>((r) => (release = r)),
      };
      armed = { collection: name, entered, release: gate.release };
      return { entered: gate.entered, release };
    },
  };
}

const h = await startHarness(t);
const gate = gated(h.db);
await h.rebuild({ db: gate.db, now: () => new Date(clock) });

const uuidOf = (n: number) => `B0B0CAFE-${String(n).padStart(4, '0')}-4000-8000-${String(n).padStart(12, '0')}`;
const xml = (n: number) =>
  cartaPorteXml({
    uuid: uuidOf(n),
    client: 'CIN010203KL5',
    load: BASE + (n % 50) * DAY,
    issued: BASE + (n % 50) * DAY + HOUR,
    plate: ONE_PLATE,
    driver: ONE_DRIVER,
    concepts: [{ code: '78101807', desc: 'Flete', qty: '1', c: 100_000 + n }],
    legs: [{ km: 100, product: '15101505', productDesc: 'Diesel', litres: 20000, unload: null }],
  });
type Report = { summary: { created: number }; files: { tripId?: string; financialDocIds?: string[] }[] };
const imp = (ns: number[]) =>
  h.app.inject({
    method: 'POST',
    url: '/api/imports',
    headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
    payload: { files: ns.map((n) => ({ name: `f${n}.xml`, content: xml(n) })) },
  });
const get = (url: string) => h.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY_A } });

type Page = {
  meta: { nextCursor: string | null; syncFrom: string };
  data: { id: string; lastUpdate?: string | null; dates?: { lastUpdate: string } }[];
};
interface Walk {
  ids: string[];
  /** The largest lastUpdate seen (the procedure documented before). */
  largest: string;
  /** Every page's meta.syncFrom. */
  syncFroms: string[];
}
/** One sync: every page of `list` changed since `since`, `limit` a page; `between` runs before each later page. */
async function walk(list: string, since: string, limit = 7, between: () => void = () => undefined): Promise<Walk> {
  const out: Walk = { ids: [], largest: since, syncFroms: [] };
  const base = `${list}?limit=${limit}&updatedSince=${encodeURIComponent(since)}`;
  let url = base;
  for (;;) {
    const r = await get(url);
    if (r.statusCode !== 200) throw new Error(`${url}: ${r.statusCode} ${r.body}`);
    const p = r.json<Page>();
    for (const d of p.data) {
      out.ids.push(d.id);
      const lu = d.lastUpdate ?? d.dates!.lastUpdate;
      if (lu > out.largest) out.largest = lu;
    }
    out.syncFroms.push(p.meta.syncFrom);
    if (!p.meta.nextCursor) return out;
    between();
    url = `${base}&cursor=${encodeURIComponent(p.meta.nextCursor)}`;
  }
}

t.test('a sync between an import batch stamp and its commit misses nothing when it resumes from meta.syncFrom', async (t) => {
  const T0 = clock;
  const first = await imp([0]);
  t.equal(first.statusCode, 200, 'trip X imported');
  const x = (await trips(h.db).findOne({ company: TENANT_A }))!;
  t.equal(x.lastUpdate, iso(T0));
  const since0 = iso(T0 - 60_000);

  // The big import takes its stamp at T1 and is held before it writes its trips (and, after them, its documents).
  clock = T0 + 10_000;
  const T1 = clock;
  const held = gate.hold(COLLECTIONS.trips);
  const big = Array.from({ length: 30 }, (_, i) => i + 1);
  const importing = imp(big);
  await held.entered;

  // Meanwhile, at T2, a delivery on trip X and a small import commit later stamps.
  clock = T0 + 20_000;
  const T2 = clock;
  const put = await h.app.inject({
    method: 'PUT',
    url: `/api/shipments/${encodeURIComponent(x._id)}/legs/${encodeURIComponent(x.shipments[0]!.shipment)}/delivery`,
    headers: { 'x-api-key': KEY_A },
    payload: { offloadDate: iso(BASE + DAY), products: [{ code: '15101505', offloaded: 19990 }] },
  });
  t.equal(put.statusCode, 200, 'delivery recorded');
  t.equal((await imp([9000])).statusCode, 200, 'small import done');

  // A client syncs now (T3), page by page.
  clock = T0 + 30_000;
  const s1 = await walk('/api/shipments', since0, 1);
  const f1 = await walk('/api/financial-docs', since0, 1);
  t.equal(s1.largest, iso(T2), 'the first sync saw the delivery (T2), later than the held import (T1)');
  t.equal(f1.largest, iso(T2), 'and the small import');
  for (const w of [s1, f1]) {
    t.ok(w.syncFroms.length > 1, `${w.syncFroms.length} pages`);
    t.same(new Set(w.syncFroms), new Set([iso(T1 - SYNC_CLOCK_MARGIN_MS)]), 'every page: syncFrom before the import in flight, less the margin');
  }
  // Version 1 (a bare array, no meta): the same instant, as the sync-from header.
  for (const list of ['/api/shipments', '/api/financial-docs']) {
    const v1 = await h.app.inject({
      method: 'GET',
      url: `${list}?limit=1&updatedSince=${encodeURIComponent(since0)}`,
      headers: { 'x-api-key': KEY_A, 'x-api-version': '1' },
    });
    t.equal(v1.statusCode, 200, `${list} version 1`);
    t.ok(Array.isArray(v1.json()), `${list} version 1: a bare array`);
    t.equal(v1.headers['sync-from'], iso(T1 - SYNC_CLOCK_MARGIN_MS), `${list} version 1: sync-from before the import in flight, less the margin`);
  }

  held.release();
  const done = await importing;
  t.equal(done.statusCode, 200, 'the held import finishes');
  const report = done.json<Report>();
  t.equal(report.summary.created, 30);
  const importedTrips = report.files.map((f) => f.tripId!);
  const importedDocs = report.files.flatMap((f) => f.financialDocIds ?? []);
  t.equal(new Set(importedTrips).size, 30);
  t.equal(new Set(importedDocs).size, 30);
  const stored = await trips(h.db).findOne({ _id: importedTrips[0]! });
  t.equal(stored?.lastUpdate, iso(T1), "the import's records carry its stamp T1 < T2");

  clock = T0 + 40_000;
  const missed = (w1: Walk, w2: Walk, ids: string[]) => ids.filter((id) => !w1.ids.includes(id) && !w2.ids.includes(id));
  // The procedure documented before: resume from the largest lastUpdate seen. The import's records are missed for good.
  const oldS = await walk('/api/shipments', s1.largest);
  const oldF = await walk('/api/financial-docs', f1.largest);
  t.equal(missed(s1, oldS, importedTrips).length, 30, 'largest lastUpdate: all 30 imported trips missed');
  t.equal(missed(f1, oldF, importedDocs).length, 30, 'largest lastUpdate: all 30 imported documents missed');
  // The documented procedure now: resume from meta.syncFrom.
  const s2 = await walk('/api/shipments', s1.syncFroms[0]!);
  const f2 = await walk('/api/financial-docs', f1.syncFroms[0]!);
  t.same(missed(s1, s2, importedTrips), [], 'meta.syncFrom: every imported trip found');
  t.same(missed(f1, f2, importedDocs), [], 'meta.syncFrom: every imported document found');
  t.ok(s2.ids.includes(x._id), 'records changed near the boundary come again (upserted by id)');
  t.equal(await h.db.collection(SYNC_WRITES_IN_FLIGHT).countDocuments({}), 0, 'no write left registered');
});

t.test("a walk's pages all carry its first page's syncFrom", async (t) => {
  const start = clock;
  let later = 0;
  const w = await walk('/api/financial-docs', iso(0), 5, () => {
    clock += 60_000;
    later += 1;
  });
  t.ok(later >= 3, `${later + 1} pages, the clock a minute later before each`);
  t.same(new Set(w.syncFroms), new Set([iso(start - SYNC_CLOCK_MARGIN_MS)]), 'the first page’s, not recomputed');
  const fresh = (await get(`/api/financial-docs?limit=5&updatedSince=${iso(0)}`)).json<Page>();
  t.equal(fresh.meta.syncFrom, iso(clock - SYNC_CLOCK_MARGIN_MS), 'a new walk takes its own (nothing in flight: now less the margin)');
  for (const list of ['/api/financial-docs', '/api/shipments']) {
    t.notOk('syncFrom' in (await get(`${list}?limit=5`)).json<Page>().meta, `${list} without updatedSince: no syncFrom (not a sync walk)`);
    const v1 = await h.app.inject({ method: 'GET', url: `${list}?limit=5`, headers: { 'x-api-key': KEY_A, 'x-api-version': '1' } });
    t.notOk('sync-from' in v1.headers, `${list} version 1 without updatedSince: no sync-from`);
  }
});

t.test('syncFrom: writes in flight per tenant, expired entries ignored; withSyncStamp registers before its stamp and always unregisters', async (t) => {
  const coll = h.db.collection<{ _id: string; tenant: string; since: Date; expiresAt: Date }>(SYNC_WRITES_IN_FLIGHT);
  const T = clock;
  const now = () => T;
  t.equal(await syncFrom(h.db, TENANT_A, now, 2000), T - 2000, 'nothing in flight: now less the margin');
  await coll.insertMany([
    { _id: 'stale', tenant: TENANT_A, since: new Date(T - HOUR), expiresAt: new Date(T - 1) },
    { _id: 'other-tenant', tenant: TENANT_B, since: new Date(T - 2 * HOUR), expiresAt: new Date(T + HOUR) },
  ]);
  t.equal(await syncFrom(h.db, TENANT_A, now, 2000), T - 2000, "an expired entry (a writer that died) and another tenant's do not count");
  await coll.insertOne({ _id: 'live', tenant: TENANT_A, since: new Date(T - 5 * 60_000), expiresAt: new Date(T + 60_000) });
  t.equal(await syncFrom(h.db, TENANT_A, now, 2000), T - 5 * 60_000 - 2000, 'a live entry: its since less the margin');
  t.equal(await syncFrom(h.db, TENANT_B, now, 0), T - 2 * HOUR, "tenant B's own");
  const listed = (await get(`/api/shipments?limit=1&updatedSince=${iso(0)}`)).json<Page>();
  t.equal(listed.meta.syncFrom, iso(T - 5 * 60_000 - SYNC_CLOCK_MARGIN_MS), 'the lists answer it');
  await coll.deleteMany({});

  let tick = T;
  const ticking = () => (tick += 1);
  let seen: { since: number; stamp: number; registered: number } | undefined;
  const answer = await withSyncStamp(h.db, TENANT_A, ticking, async (stamp) => {
    const entries = await coll.find({ tenant: TENANT_A }).toArray();
    seen = { since: entries[0]!.since.getTime(), stamp, registered: entries.length };
    t.equal(await syncFrom(h.db, TENANT_A, ticking, 0), seen.since, 'a reader now resumes at its since');
    return 'written';
  });
  t.equal(answer, 'written');
  t.equal(seen?.registered, 1, 'registered while it writes');
  t.ok(seen!.stamp >= seen!.since, `stamp ${seen!.stamp} ≥ since ${seen!.since}`);
  t.equal(await coll.countDocuments({}), 0, 'unregistered after');
  await t.rejects(
    withSyncStamp(h.db, TENANT_A, ticking, () => Promise.reject(new Error('write failed'))),
    /write failed/,
    'a failed write fails',
  );
  t.equal(await coll.countDocuments({}), 0, 'and is unregistered too');
});

t.test('MCP: listFinancialDocs and listShipments answer meta.syncFrom', async (t) => {
  const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
  for (const name of ['listFinancialDocs', 'listShipments']) {
    const res = await client.callTool({ name, arguments: { limit: 2, updatedSince: iso(0) } });
    t.notOk(res.isError, name);
    const page = res.structuredContent as Page;
    t.equal(page.meta.syncFrom, iso(clock - SYNC_CLOCK_MARGIN_MS), `${name}: meta.syncFrom`);
    t.ok(page.meta.nextCursor, 'and a cursor');
  }
});
