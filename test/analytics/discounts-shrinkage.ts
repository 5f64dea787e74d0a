/**
 * GET /api/analytics/discounts-and-shrinkage through HTTP on the embedded
 * engine against hand-computed discounts, accessorials and shrinkage recovery.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import {
  makeFinancialDoc,
  makeTrip,
  leg,
  diesel,
  gasoline,
  freight,
  demurrage,
  handling,
  shortage,
  CLIENT_COMPANY,
  CLIENT_COMPANY_2,
  CLIENT_PERSON,
} from '../fixtures/documents.ts';
import { financialDocs, tenantSettings } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { rebuildRollups } from '../../lib/rollups/rebuild-rollups.ts';
import { discountsShrinkageRollupsReady } from '../../lib/analytics/refresh-discounts-shrinkage-rollups.ts';

export default async function discountsShrinkageTests(t: Test): Promise<void> {
  const NOW = new Date('2026-04-20T12:00:00-06:00');
  const h = await startHarness(t, { build: { now: () => NOW } });
  const ROUTE = '/api/analytics/discounts-and-shrinkage';
  const get = (query: string, key = KEY_A) => h.app.inject({ method: 'GET', url: `${ROUTE}${query}`, headers: { 'x-api-key': key } });
  const MARCH = '?startDate=2026-03-01&endDate=2026-03-31';

  // Tolerance 0.2% (tenant), 0.5% for CLIENT_COMPANY_2 (rule); recovery mode and prices are the defaults (excess; diesel 24.50/L).
  await tenantSettings(h.db).updateOne(
    { _id: TENANT_A },
    { $set: { shrinkageTolerancePct: 0.2, toleranceRules: [{ client: CLIENT_COMPANY_2, pct: 0.5 }] } },
    { upsert: true },
  );

  const A = { tenant: TENANT_A };
  const i1 = makeFinancialDoc({
    ...A,
    client: CLIENT_COMPANY,
    date: '2026-03-05T12:00',
    concepts: [freight(10_000, { discount: 500 }), demurrage(1_500), shortage(245, { quantity: 10 })],
  });
  const i2 = makeFinancialDoc({ ...A, client: CLIENT_COMPANY, date: '2026-03-20T12:00', concepts: [freight(5_000), handling(800)] });
  const i3 = makeFinancialDoc({ ...A, client: CLIENT_COMPANY_2, date: '2026-03-10T12:00', concepts: [freight(20_000, { discount: 1_000 }), demurrage(2_000)] });
  const i4 = makeFinancialDoc({ ...A, client: CLIENT_COMPANY_2, date: '2026-03-12T12:00', concepts: [freight(7_000, { discount: 700 })], cancelled: true });
  const i5 = makeFinancialDoc({ ...A, client: CLIENT_COMPANY, date: '2026-02-25T12:00', concepts: [freight(9_000, { discount: 900 })] });
  const i6 = makeFinancialDoc({ ...A, client: CLIENT_PERSON, date: '2026-03-15T12:00', concepts: [demurrage(1_000)] }); // no freight at all
  const iB = makeFinancialDoc({ tenant: TENANT_B, client: CLIENT_COMPANY, date: '2026-03-05T12:00', concepts: [freight(50_000, { discount: 25_000 })] });

  const delivered = (day: string) => ({ loadDate: `${day}T08:00`, unloadDate: `${day}T18:00` });
  // tr1: 60 L of 20,000 = 0.3% > 0.2% → 20 L beyond the 40 L allowance → 20 × 24.50 = 490 recoverable; i1 recovered 245 (10 L).
  const tr1 = makeTrip({ ...A, client: CLIENT_COMPANY, idFinan: i1.id, legs: [leg({ ...delivered('2026-03-04'), products: [diesel(20_000, 19_940)] })] });
  // tr2: exactly 0.2%: at tolerance, not beyond.
  const tr2 = makeTrip({ ...A, client: CLIENT_COMPANY, idFinan: i2.id, legs: [leg({ ...delivered('2026-03-18'), products: [diesel(10_000, 9_980)] })] });
  // tr3 (0.5% rule): 0.4% below tolerance, and a 10 L gain on gasoline.
  const tr3 = makeTrip({
    ...A,
    client: CLIENT_COMPANY_2,
    idFinan: i3.id,
    legs: [leg({ ...delivered('2026-03-08'), products: [diesel(10_000, 9_960)] }), leg({ ...delivered('2026-03-09'), products: [gasoline(5_000, 5_010)] })],
  });
  // tr4: 1% > 0.5%: 50 L beyond → 1,225 recoverable; not billed, nothing recovered.
  const tr4 = makeTrip({ ...A, client: CLIENT_COMPANY_2, legs: [leg({ ...delivered('2026-03-25'), products: [diesel(10_000, 9_900)] })] });
  // Not delivered in March: delivered in April; one leg still in transit.
  const tr5 = makeTrip({ ...A, client: CLIENT_COMPANY, legs: [leg({ ...delivered('2026-04-02'), products: [diesel(10_000, 9_000)] })] });
  const tr6 = makeTrip({
    ...A,
    client: CLIENT_COMPANY,
    legs: [
      leg({ ...delivered('2026-03-31'), products: [diesel(10_000, 9_000)] }),
      leg({ loadDate: '2026-03-31T20:00', unloadDate: null, products: [diesel(10_000, 0)] }),
    ],
  });
  const trB = makeTrip({
    tenant: TENANT_B,
    client: CLIENT_COMPANY,
    idFinan: i1.id,
    legs: [leg({ ...delivered('2026-03-04'), products: [diesel(20_000, 10_000)] })],
  });
  await financialDocs(h.db).insertMany([i1, i2, i3, i4, i5, i6, iB].map(withDerivedFields));
  await insertTrips(h.db, [tr1, tr2, tr3, tr4, tr5, tr6, trB]);

  t.test('discounts, demurrage and shrinkage recovery in March', async (t) => {
    const res = await get(MARCH);
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.match(body, { tenant: TENANT_A, computedAt: NOW.toISOString(), period: { startDate: '2026-03-01', endDate: '2026-03-31', days: 31, defaulted: false } });
    t.match(body.parameters.shrinkage, {
      defaultTolerancePct: 0.2,
      toleranceRules: [{ client: CLIENT_COMPANY_2, pct: 0.5 }],
      recoveryMode: 'excess',
      pricePerLitre: { '15101505': 24.5 },
      settingsSource: { tolerance: 'tenant', toleranceRules: 'tenant', recoveryMode: 'default', pricePerLitre: 'default' },
    });

    // Discounts: 1,500 of 35,000 gross freight (the cancelled and the February invoice are out).
    t.same(body.discounts.totals, {
      documents: 4,
      documentsWithDiscount: 2,
      grossFreight: 35_000,
      discounts: 1_500,
      freightDiscounts: 1_500,
      discountRatePct: { value: 4.2857 },
    });
    t.match(body.discounts.byClient, { total: 3, listed: 3, limit: 20 });
    // Largest gross freight first.
    t.same(body.discounts.byClient.data, [
      {
        client: CLIENT_COMPANY_2,
        documents: 1,
        documentsWithDiscount: 1,
        grossFreight: 20_000,
        discounts: 1_000,
        freightDiscounts: 1_000,
        discountRatePct: { value: 5 },
      },
      {
        client: CLIENT_COMPANY,
        documents: 2,
        documentsWithDiscount: 1,
        grossFreight: 15_000,
        discounts: 500,
        freightDiscounts: 500,
        discountRatePct: { value: 3.3333 },
      },
      {
        client: CLIENT_PERSON,
        documents: 1,
        documentsWithDiscount: 0,
        grossFreight: 0,
        discounts: 0,
        freightDiscounts: 0,
        discountRatePct: { value: null, reason: 'no gross freight (division by zero)' },
      },
    ]);
    t.same(
      body.discounts.byClientMonth.data.map((r: { client: string; month: string }) => `${r.client} ${r.month}`),
      [`${CLIENT_COMPANY_2} 2026-03`, `${CLIENT_COMPANY} 2026-03`, `${CLIENT_PERSON} 2026-03`],
    );

    t.same(body.demurrage.totals, { documents: 4, documentsWithDemurrage: 3, demurrage: 4_500, demurrageLines: 3, handling: 800, handlingLines: 1 });
    // Largest demurrage + handling first.
    t.match(body.demurrage.byClient.data, [
      { client: CLIENT_COMPANY, demurrage: 1_500, handling: 800 },
      { client: CLIENT_COMPANY_2, demurrage: 2_000, handling: 0 },
      { client: CLIENT_PERSON, demurrage: 1_000 },
    ]);

    t.same(body.shrinkage.totals, {
      trips: 4,
      legs: 5,
      loadedLitres: 55_000,
      offloadedLitres: 54_790,
      shrinkageLitres: 210,
      legsOutOfTolerance: 2,
      legsWithGain: 1,
      excessLitres: 70,
      recoverableLitres: 70,
      recoverableValue: 1_715,
      recovered: { invoices: 1, lines: 1, litres: 10, value: 245 },
      recoveryRatePct: { value: 14.29 },
      unpricedProductCodes: [],
    });
    // Largest recoverable value first.
    t.match(body.shrinkage.byClient, { total: 2, listed: 2, limit: 20 });
    t.match(body.shrinkage.byClient.data, [
      {
        client: CLIENT_COMPANY_2,
        trips: 2,
        legs: 3,
        shrinkageLitres: 130,
        legsOutOfTolerance: 1,
        legsWithGain: 1,
        recoverableValue: 1_225,
        recovered: { value: 0 },
        recoveryRatePct: { value: 0 },
      },
      {
        client: CLIENT_COMPANY,
        trips: 2,
        legs: 2,
        shrinkageLitres: 80,
        legsOutOfTolerance: 1,
        recoverableValue: 490,
        recovered: { value: 245 },
        recoveryRatePct: { value: 50 },
      },
    ]);
    t.match(body.shrinkage.worstLegs, { total: 2, listed: 2 });
    t.match(body.shrinkage.worstLegs.data, [
      {
        tripId: tr4._id,
        client: CLIENT_COMPANY_2,
        shrinkageVolume: 100,
        shrinkagePercent: 1,
        tolerancePct: 0.5,
        recoverableLitres: 50,
        recoverableValue: 1_225,
        invoiceId: null,
      },
      { tripId: tr1._id, shrinkagePercent: 0.3, tolerancePct: 0.2, recoverableLitres: 20, recoverableValue: 490, invoiceId: i1.id },
    ]);
  });

  t.test('nothing recoverable: rates are null with a reason', async (t) => {
    const res = await get(`${MARCH}&client=${CLIENT_PERSON}`);
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.match(body.shrinkage.totals, { trips: 0, legs: 0, recoverableValue: 0, recoveryRatePct: { value: null, reason: /recoverable shrinkage value/ } });
    t.match(body.discounts.totals, { grossFreight: 0, discountRatePct: { value: null, reason: /gross freight/ } });
  });

  t.test('tenant isolation and limit', async (t) => {
    const b = await get(MARCH, KEY_B);
    assertConforms(t, b, 'GET', ROUTE);
    // B's trip links to A's invoice id: the link must not resolve across tenants.
    t.match(b.json(), {
      tenant: TENANT_B,
      discounts: { totals: { documents: 1, discounts: 25_000 } },
      shrinkage: { totals: { trips: 1, recovered: { invoices: 0, value: 0 } } },
    });
    const capped = (await get(`${MARCH}&limit=1`)).json();
    t.match(capped.shrinkage.worstLegs, { total: 2, listed: 1, limit: 1, data: [{ tripId: tr4._id }] });
    // Every per-client list is capped by the same limit, the first the one that matters most.
    t.match(capped.discounts.byClient, { total: 3, listed: 1, limit: 1, data: [{ client: CLIENT_COMPANY_2 }] });
    t.match(capped.discounts.byClientMonth, { total: 3, listed: 1, limit: 1, data: [{ client: CLIENT_COMPANY_2, month: '2026-03' }] });
    t.match(capped.demurrage.byClient, { total: 3, listed: 1, limit: 1, data: [{ client: CLIENT_COMPANY }] });
    t.match(capped.shrinkage.byClient, { total: 2, listed: 1, limit: 1, data: [{ client: CLIENT_COMPANY_2 }] });
  });

  // After the subtests that read the documents: this one builds the kept totals.
  t.test('an invoice linked by trips of two clients: a filter by client answers its unfiltered row', async (t) => {
    // January (no other trip or invoice of tenant A): IZ (client C1) is linked by TZ1 (client C2) and TZ2 (client C1);
    // it counts for the client of the linking trip with the smallest id, TZ1's: C2, filtered or not.
    const C1 = CLIENT_COMPANY;
    const C2 = CLIENT_COMPANY_2;
    const iz = makeFinancialDoc({ ...A, id: 'IZ', client: C1, date: '2026-01-20T10:00', concepts: [freight(8_000), shortage(100, { quantity: 4 })] });
    const tz1 = makeTrip({ ...A, _id: 'TZ1', client: C2, idFinan: iz.id, legs: [leg({ ...delivered('2026-01-18'), products: [diesel(10_000, 9_900)] })] });
    const tz2 = makeTrip({ ...A, _id: 'TZ2', client: C1, idFinan: iz.id, legs: [leg({ ...delivered('2026-01-19'), products: [diesel(5_000, 5_000)] })] });
    await financialDocs(h.db).insertMany([iz].map(withDerivedFields));
    await insertTrips(h.db, [tz1, tz2]);
    const JANUARY = { startDate: '2026-01-01', endDate: '2026-01-31' };
    const none = { invoices: 0, lines: 0, litres: 0, value: 0 };
    // By hand. C2 (0.5% rule): 100 L of 10,000 = 1% → 50 L beyond → 1,225 recoverable; IZ's 100 (4 L) recovered: 8.16%.
    const rowC2 = {
      trips: 1,
      legs: 1,
      loadedLitres: 10_000,
      offloadedLitres: 9_900,
      shrinkageLitres: 100,
      legsOutOfTolerance: 1,
      legsWithGain: 0,
      excessLitres: 50,
      recoverableLitres: 50,
      recoverableValue: 1_225,
      recovered: { invoices: 1, lines: 1, litres: 4, value: 100 },
      recoveryRatePct: { value: 8.16 },
      unpricedProductCodes: [],
    };
    // C1: no shrinkage, nothing recoverable, nothing recovered (IZ is C2's).
    const rowC1 = {
      trips: 1,
      legs: 1,
      loadedLitres: 5_000,
      offloadedLitres: 5_000,
      shrinkageLitres: 0,
      legsOutOfTolerance: 0,
      legsWithGain: 0,
      excessLitres: 0,
      recoverableLitres: 0,
      recoverableValue: 0,
      recovered: none,
      recoveryRatePct: { value: null, reason: 'no recoverable shrinkage value (division by zero)' },
      unpricedProductCodes: [],
    };
    const totals = { ...rowC2, trips: 2, legs: 2, loadedLitres: 15_000, offloadedLitres: 14_900 };
    const base = await listen(h.app);
    const mcp = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    const strip = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (k, x) => (k === 'computedAt' ? undefined : x)));
    type Row = { client: string } & Record<string, unknown>;
    type Answer = {
      discounts: { totals: Record<string, unknown>; byClient: { data: Row[] } };
      demurrage: { totals: Record<string, unknown>; byClient: { data: Row[] } };
      shrinkage: { totals: Record<string, unknown>; byClient: { data: Row[] }; worstLegs: { total: number; data: { tripId: string; client: string }[] } };
    };
    /** The answer over HTTP, checked equal over MCP. */
    const answer = async (t: Test, client?: string): Promise<Answer> => {
      const args = { ...JANUARY, ...(client ? { client } : {}) };
      const res = await get(`?${new URLSearchParams(args).toString()}`);
      t.equal(res.statusCode, 200, res.body);
      assertConforms(t, res, 'GET', ROUTE);
      const r = (await mcp.callTool({ name: 'auditDiscountsAndShrinkage', arguments: args })) as { structuredContent?: unknown; isError?: boolean };
      t.notOk(r.isError, `MCP ${client ?? 'unfiltered'}`);
      t.same(strip(r.structuredContent), strip(res.json()), `MCP = HTTP (${client ?? 'unfiltered'})`);
      return res.json();
    };
    const rowOf = (rows: Row[], client: string): Record<string, unknown> | undefined => {
      const found = rows.find((r) => r.client === client);
      if (!found) return undefined;
      const { client: _c, ...rest } = found;
      return rest;
    };
    const check = async (t: Test, source: string): Promise<Answer> => {
      const all = await answer(t);
      t.same(all.shrinkage.totals, totals, `${source}: totals`);
      t.same(
        all.shrinkage.byClient.data.map((r) => r.client),
        [C2, C1],
        `${source}: clients, largest recoverable value first`,
      );
      t.same(rowOf(all.shrinkage.byClient.data, C2), rowC2, `${source}: C2 recovered 100`);
      t.same(rowOf(all.shrinkage.byClient.data, C1), rowC1, `${source}: C1 recovered 0`);
      for (const [client, row] of [
        [C2, rowC2],
        [C1, rowC1],
      ] as const) {
        const one = await answer(t, client);
        // Every figure of the filtered answer is the client's unfiltered row (or none).
        t.same(one.shrinkage.totals, row, `${source}: ${client} filtered = hand row`);
        t.same(one.shrinkage.totals, rowOf(all.shrinkage.byClient.data, client), `${source}: ${client} filtered = its unfiltered row`);
        t.same(
          one.shrinkage.byClient.data.map((r) => r.client),
          [client],
          `${source}: ${client} alone`,
        );
        t.same(
          one.shrinkage.worstLegs.data.map((w) => w.tripId),
          all.shrinkage.worstLegs.data.filter((w) => w.client === client).map((w) => w.tripId),
          `${source}: ${client} worst legs`,
        );
        for (const part of ['discounts', 'demurrage'] as const) {
          const mine = rowOf(all[part].byClient.data, client);
          if (mine) t.match(one[part].totals, mine, `${source}: ${client} ${part} = its unfiltered row`);
          else t.match(one[part].totals, { documents: 0 }, `${source}: ${client} no ${part}`);
        }
      }
      return all;
    };

    t.notOk(await discountsShrinkageRollupsReady(h.db), 'read from the documents');
    const fromDocs = await check(t, 'documents');
    await rebuildRollups(h.db);
    t.ok(await discountsShrinkageRollupsReady(h.db), 'the kept totals are built');
    const fromKept = await check(t, 'kept totals');
    t.same(strip(fromKept), strip(fromDocs), 'kept = documents');
  });

  t.test('parameter validation', async (t) => {
    for (const [query, detail] of [
      ['?limit=101', /limit must be an integer between 1 and 100/],
      ['?vehicle=ECO-1', /unknown query parameter 'vehicle'/],
    ] as const) {
      const res = await get(query);
      t.equal(res.statusCode, 400, query);
      assertConforms(t, res, 'GET', ROUTE);
      t.match(res.json().error.details.join(' | '), detail, query);
    }
  });
}
