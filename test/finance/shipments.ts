import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { makeFinancialDoc, makeTrip, leg, diesel, gasoline, payment, CLIENT_COMPANY, CLIENT_COMPANY_2 } from '../fixtures/documents.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import { saveTenantSettings, getTenantSettings } from '../../lib/settings/settings-repo.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';

export default async function shipmentsTests(t: Test): Promise<void> {
  // A clock of its own, before version 1's sunset (2027-06-30): its version 1 answers stay what they test.
  const h = await startHarness(t, { build: { now: () => new Date('2026-12-01T12:00:00-06:00') } });
  const ROUTE = '/api/shipments';
  const get = (query: string, key = KEY_A, headers: Record<string, string> = {}) =>
    h.app.inject({ method: 'GET', url: `${ROUTE}${query}`, headers: { 'x-api-key': key, ...headers } });

  const invoiceA = makeFinancialDoc({ tenant: TENANT_A, status: 4, payments: [payment(5_000, '2026-03-20')] });
  const invoiceB = makeFinancialDoc({ tenant: TENANT_B, status: 6 });
  // t1: two legs; leg 1 0.1% shrinkage, leg 2 none; linked to A's invoice.
  const t1 = makeTrip({
    tenant: TENANT_A,
    client: CLIENT_COMPANY,
    idFinan: invoiceA.id,
    createdAt: '2026-03-05T06:00',
    legs: [
      leg({ shipment: 'EM-1-1', date: '2026-03-05', loadDate: '2026-03-05T08:00', unloadDate: '2026-03-05T20:00', products: [diesel(20_000, 19_980)] }),
      leg({
        shipment: 'EM-1-2',
        date: '2026-03-06',
        loadDate: '2026-03-06T08:00',
        unloadDate: '2026-03-07T01:00',
        products: [diesel(10_000, 10_000), gasoline(5_000, 5_000)],
      }),
    ],
  });
  // t2: links to B's invoice (another tenant): must not be cross-linked.
  const t2 = makeTrip({
    tenant: TENANT_A,
    client: CLIENT_COMPANY_2,
    idFinan: invoiceB.id,
    createdAt: '2026-03-08T06:00',
    legs: [leg({ shipment: 'EM-2-1', date: '2026-03-08', status: 5, products: [gasoline(30_000, 29_850)] })],
  });
  // t3: nothing loaded yet (0 litres: 0% shrinkage), not billed.
  const t3 = makeTrip({
    tenant: TENANT_A,
    client: CLIENT_COMPANY,
    createdAt: '2026-03-10T06:00',
    legs: [leg({ shipment: 'EM-3-1', date: '2026-03-10', loadDate: null, unloadDate: null, products: [diesel(0, 0)] })],
  });
  const tB = makeTrip({
    tenant: TENANT_B,
    client: CLIENT_COMPANY,
    idFinan: invoiceB.id,
    createdAt: '2026-03-09T06:00',
    legs: [leg({ shipment: 'EM-B-1', date: '2026-03-09' })],
  });
  await financialDocs(h.db).insertMany([invoiceA, invoiceB].map(withDerivedFields));
  await insertTrips(h.db, [t1, t2, t3, tB]);

  const ids = (res: { json(): { data: { id: string }[] } }) => res.json().data.map((d) => d.id);

  t.test('summary: volumes, shrinkage, tolerance, cross-link', async (t) => {
    const res = await get('');
    t.equal(res.statusCode, 200);
    assertConforms(t, res, 'GET', ROUTE);
    t.same(ids(res), [t3._id, t2._id, t1._id], 'newest first');
    const [s3, s2, s1] = res.json().data;
    t.same(s1.shipments[0].volumes, {
      loaded: 20_000,
      offloaded: 19_980,
      shrinkageVolume: 20,
      shrinkagePercent: 0.1,
      tolerancePercent: 0,
      exceedsTolerance: true,
      products: [{ desc: 'Diésel', code: '15101505', loaded: 20_000, offloaded: 19_980 }],
    });
    t.equal(s1.shipments[1].volumes.loaded, 15_000, 'products summed');
    t.equal(s1.shipments[1].volumes.exceedsTolerance, false, 'no shrinkage is within a 0% tolerance');
    t.same(s1.financialLinked, {
      id: invoiceA.id,
      status: { code: 4, label: 'Facturado' },
      total: invoiceA.iTot,
      pending: invoiceA.iTot - 5_000,
      invoiceFolio: invoiceA.invoice.num,
      invoiceUuid: invoiceA.invoice.uuid,
      // A fixture has no kept original: null links, not dead ones (test/originals/originals.ts has the kept ones).
      pdf: null,
      xml: null,
    });
    t.equal(s2.financialLinked, null, "another tenant's document is never cross-linked");
    t.equal(s3.financialLinked, null, 'unbilled trip');
    t.same(
      s3.shipments[0].volumes,
      {
        loaded: 0,
        offloaded: null,
        shrinkageVolume: null,
        shrinkagePercent: null,
        tolerancePercent: 0,
        exceedsTolerance: false,
        products: [{ desc: 'Diésel', code: '15101505', loaded: 0, offloaded: null }],
      },
      'not loaded yet: in transit, no shrinkage',
    );
    t.equal(s3.shipments[0].delivered, false);
    t.equal(s1.shipments[0].delivered, true);
    t.equal(s3.shipments[0].loadDate, null);
    t.same(s1.route.origin, { id: t1.origin.id, city: t1.origin.address.city, state: t1.origin.address.state });
    t.equal(s1.driver, t1.driver.name);
    t.equal(s1.references.idFinan, invoiceA.id);
  });

  t.test('tenant tolerance setting', async (t) => {
    await saveTenantSettings(h.db, { ...(await getTenantSettings(h.db, TENANT_A)), shrinkageTolerancePct: 0.3 });
    const res = await get(`?shipmentId=EM-1-1`);
    const v = res.json().data[0].shipments[0].volumes;
    t.equal(v.tolerancePercent, 0.3);
    t.equal(v.exceedsTolerance, false, '0.1% is within 0.3%');
    const r2 = await get('?shipmentId=EM-2-1');
    t.equal(r2.json().data[0].shipments[0].volumes.shrinkagePercent, 0.5);
    t.equal(r2.json().data[0].shipments[0].volumes.exceedsTolerance, true, '0.5% is beyond 0.3%');
    await saveTenantSettings(h.db, { ...(await getTenantSettings(h.db, TENANT_A)), shrinkageTolerancePct: 0 });
  });

  t.test('filters', async (t) => {
    const cases: [string, string[]][] = [
      [`?client=${CLIENT_COMPANY}`, [t3._id, t1._id]],
      ['?shipmentId=EM-1-2', [t1._id]],
      ['?status=5', [t2._id]],
      ['?startDate=2026-03-06&endDate=2026-03-08', [t2._id, t1._id]],
      ['?startDate=2026-03-06&endDate=2026-03-06', [t1._id]],
      ['?startDate=2026-03-07&endDate=2026-03-07&dateFilterBy=offload', [t1._id]],
      ['?startDate=2026-03-07&endDate=2026-03-07&dateFilterBy=load', []],
      ['?loadStartDate=2026-03-06&loadEndDate=2026-03-06', [t1._id]],
      ['?offloadStartDate=2026-03-05&offloadEndDate=2026-03-05', [t1._id]],
      ['?offloadStartDate=2026-03-08', [t2._id]],
      ['?status=5&shipmentId=EM-1-1', []],
    ];
    for (const [query, expected] of cases) {
      const res = await get(query);
      t.equal(res.statusCode, 200, `${query}: ${res.body.slice(0, 200)}`);
      t.same(ids(res), expected, query);
    }
  });

  t.test('full form and legacy shape', async (t) => {
    const full = await get('?detail=full&shipmentId=EM-1-1');
    assertConforms(t, full, 'GET', ROUTE);
    // Version 2 names the stored trip's key `id` (as the summary does); version 1 keeps the store's `_id`.
    const { _id: t1Key, ...t1Fields } = t1;
    t.same(full.json().data, [{ id: t1Key, ...t1Fields }]);
    const legacy = await get('?limit=1', KEY_A, { 'x-api-version': '1' });
    assertConforms(t, legacy, 'GET', ROUTE);
    t.same(legacy.json(), [t3]);
  });

  t.test('tenant isolation and pagination', async (t) => {
    const b = await get('', KEY_B);
    t.same(ids(b), [tB._id]);
    t.equal(b.json().data[0].financialLinked.id, invoiceB.id);
    const probe = await get('?shipmentId=EM-1-1', KEY_B);
    t.same(probe.json().data, []);
    const p2 = await get('?limit=2&page=2');
    t.same(ids(p2), [t1._id]);
    t.same(p2.json().meta, { total: 3, page: 2, limit: 2, pages: 2, hasMore: false, nextCursor: null, tenant: TENANT_A, detail: 'summary' });
  });

  t.test('validation', async (t) => {
    for (const q of ['?dateFilterBy=yesterday', '?loadStartDate=2026-13-01', '?status=x', '?limit=0', '?shipmentId=', '?bogus=1']) {
      const r = await get(q);
      t.equal(r.statusCode, 400, q);
      assertConforms(t, r, 'GET', ROUTE);
    }
  });

  t.test('a whole month by offload date: the legs offloaded in it, Mexico City time, each trip once', async (t) => {
    // Instants written with their offset (Mexico City is UTC-6 all year since 2022): the month's edges by hand.
    const at = (iso: string) => Date.parse(iso);
    const offloaded = (shipment: string, iso: string) =>
      leg({ shipment, loadDate: at(iso) - 3_600_000, unloadDate: at(iso), products: [diesel(10_000, 9_990)], status: 4 });
    // A trip created at `created` (Mexico City), of CLIENT_COMPANY unless another is named.
    const trip = (created: string, legs: ReturnType<typeof leg>[], client = CLIENT_COMPANY) =>
      makeTrip({ tenant: TENANT_A, client, createdAt: at(`${created}-06:00`), legs });
    const edges = trip(
      '2026-04-30T20:00:00',
      [offloaded('MAY-1-1', '2026-04-30T23:59:59.999-06:00'), offloaded('MAY-1-2', '2026-05-01T00:00:00-06:00')],
      CLIENT_COMPANY_2,
    );
    const lastInstant = trip('2026-05-31T10:00:00', [offloaded('MAY-2-1', '2026-05-31T23:59:59.999-06:00')]);
    // 2026-06-01T05:30Z is still May 31 in Mexico City.
    const utcJune = trip('2026-05-20T08:00:00', [offloaded('MAY-3-1', '2026-06-01T05:30:00Z')]);
    const twoLegsInMay = trip('2026-05-03T08:00:00', [offloaded('MAY-4-1', '2026-05-03T18:00:00-06:00'), offloaded('MAY-4-2', '2026-05-20T18:00:00-06:00')]);
    const june = trip('2026-05-30T08:00:00', [offloaded('JUN-1-1', '2026-06-01T00:00:00-06:00')]);
    const onTheRoad = trip('2026-05-10T08:00:00', [
      leg({ shipment: 'MAY-5-1', loadDate: at('2026-05-10T09:00:00-06:00'), unloadDate: null, status: 2, products: [diesel(10_000, null)] }),
    ]);
    const otherTenant = makeTrip({
      tenant: TENANT_B,
      client: CLIENT_COMPANY,
      createdAt: at('2026-05-12T08:00:00-06:00'),
      legs: [offloaded('MAY-B-1', '2026-05-12T18:00:00-06:00')],
    });
    await insertTrips(h.db, [edges, lastInstant, utcJune, twoLegsInMay, june, onTheRoad, otherTenant]);

    const may = [lastInstant._id, utcJune._id, twoLegsInMay._id, edges._id]; // newest trip first
    for (const query of [
      '?dateFilterBy=offload&startDate=2026-05-01&endDate=2026-05-31',
      '?offloadStartDate=2026-05-01&offloadEndDate=2026-05-31',
      // The general range and the specific one intersect to the month.
      '?dateFilterBy=offload&startDate=2026-04-15&endDate=2026-05-31&offloadStartDate=2026-05-01&offloadEndDate=2026-06-20',
    ]) {
      const res = await get(query);
      t.equal(res.statusCode, 200, query);
      assertConforms(t, res, 'GET', ROUTE);
      t.same(ids(res), may, query);
      t.equal(res.json().meta.total, 4, `${query}: counted once per trip`);
    }
    const page2 = await get('?dateFilterBy=offload&startDate=2026-05-01&endDate=2026-05-31&limit=3&page=2');
    t.same(ids(page2), [edges._id], 'a page past the first');
    t.same(page2.json().meta, { total: 4, page: 2, limit: 3, pages: 2, hasMore: false, nextCursor: null, tenant: TENANT_A, detail: 'summary' });
    const walked: string[] = [];
    for (let cursor: string | null = null, n = 0; n < 5; n++) {
      const res = await get(`?dateFilterBy=offload&startDate=2026-05-01&endDate=2026-05-31&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      walked.push(...ids(res));
      cursor = res.json().meta.nextCursor;
      if (!cursor) break;
    }
    t.same(walked, may, 'a cursor walk gives the same trips in the same order');
    t.same(ids(await get('?dateFilterBy=offload&startDate=2026-04-01&endDate=2026-04-30')), [edges._id], 'April: its last instant');
    t.same(ids(await get('?dateFilterBy=offload&startDate=2026-06-01&endDate=2026-06-30')), [june._id], 'June: from its first instant');
    t.same(ids(await get(`?dateFilterBy=offload&startDate=2026-05-01&endDate=2026-05-31&client=${CLIENT_COMPANY_2}`)), [edges._id], 'with a client');
    t.same(ids(await get('?dateFilterBy=offload&startDate=2026-05-01&endDate=2026-05-31&status=2')), [], 'with a leg status: the same leg must match both');
    t.same(
      ids(await get('?dateFilterBy=offload&startDate=2026-05-02&endDate=2026-05-31')),
      [lastInstant._id, utcJune._id, twoLegsInMay._id],
      'not a whole month',
    );
    t.same(ids(await get('?dateFilterBy=offload&startDate=2026-05-01&endDate=2026-05-31', KEY_B)), [otherTenant._id], "another tenant's month");
    const full = await get('?detail=full&dateFilterBy=offload&startDate=2026-06-01&endDate=2026-06-30');
    t.notOk('offloadMonths' in full.json().data[0], 'the stored months stay in the store');
  });
}
