/**
 * GET /api/analytics/dispatch-to-bill through HTTP on the embedded engine:
 * lags (negative = pre-billed), percentiles, leakage and link states, hand-computed.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { makeFinancialDoc, makeTrip, leg, CLIENT_COMPANY, CLIENT_COMPANY_2, CLIENT_PERSON } from '../fixtures/documents.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';

export default async function dispatchToBillTests(t: Test): Promise<void> {
  const NOW = new Date('2026-04-20T12:00:00-06:00');
  const h = await startHarness(t, { build: { now: () => NOW } });
  const ROUTE = '/api/analytics/dispatch-to-bill';
  const get = (query: string, key = KEY_A) => h.app.inject({ method: 'GET', url: `${ROUTE}${query}`, headers: { 'x-api-key': key } });
  const PERIOD = '?startDate=2026-04-01&endDate=2026-04-15';

  const A = { tenant: TENANT_A };
  const invoice = (client: string, date: string, cancelled = false) => makeFinancialDoc({ ...A, client, date, cancelled });
  /** A one-leg trip offloaded at `unload` (loaded 6 h before), value 10,000 unless priced. */
  const trip = (client: string, unload: string, idFinan: string | null, pricing?: { billedFreight: number; toll: number }) => {
    const u = new Date(`${unload}:00-06:00`).getTime();
    return makeTrip({ ...A, client, idFinan, legs: [leg({ loadDate: u - 6 * 3_600_000, unloadDate: u, ...(pricing ? { pricing } : {}) })] });
  };
  const inv1 = invoice(CLIENT_COMPANY, '2026-04-03T10:00');
  const inv2 = invoice(CLIENT_COMPANY, '2026-04-06T22:00');
  const inv3 = invoice(CLIENT_COMPANY, '2026-04-04T10:00'); // issued at dispatch, before the delivery
  const inv4 = invoice(CLIENT_COMPANY, '2026-04-16T10:00'); // after the period: still bills its trip
  const inv6 = invoice(CLIENT_COMPANY, '2026-04-09T10:00', true);
  const inv10 = invoice(CLIENT_COMPANY_2, '2026-04-11T12:00');
  const b1 = trip(CLIENT_COMPANY, '2026-04-02T10:00', inv1.id); // lag +1
  const b2 = trip(CLIENT_COMPANY, '2026-04-03T10:00', inv2.id); // +3.5
  const b3 = trip(CLIENT_COMPANY, '2026-04-05T10:00', inv3.id); // −1: pre-billed
  const b4 = trip(CLIENT_COMPANY, '2026-04-06T10:00', inv4.id); // +10
  const b5 = trip(CLIENT_COMPANY, '2026-04-07T10:00', null, { billedFreight: 10_000, toll: 500 }); // unbilled, 10,500
  const b6 = trip(CLIENT_COMPANY, '2026-04-08T10:00', inv6.id); // linked to a cancelled invoice: unbilled, 10,000
  const b7 = trip(CLIENT_COMPANY, '2026-04-09T10:00', 'LEGACY-000001'); // unresolved link
  const b8 = makeTrip({
    ...A,
    client: CLIENT_COMPANY,
    legs: [leg({ loadDate: '2026-04-10T04:00', unloadDate: '2026-04-10T10:00' }), leg({ loadDate: '2026-04-10T12:00', unloadDate: null })],
  }); // in transit
  const b9 = makeTrip({
    ...A,
    client: CLIENT_COMPANY,
    legs: [leg({ loadDate: '2026-04-14T04:00', unloadDate: '2026-04-14T10:00' }), leg({ loadDate: '2026-04-16T04:00', unloadDate: '2026-04-16T10:00' })],
  }); // delivered after the period
  const b10 = trip(CLIENT_COMPANY_2, '2026-04-11T10:00', inv10.id); // +2 h = 0.08 days
  const bB = makeTrip({
    tenant: TENANT_B,
    client: CLIENT_COMPANY,
    idFinan: inv1.id,
    legs: [leg({ loadDate: '2026-04-02T04:00', unloadDate: '2026-04-02T10:00' })],
  });
  await financialDocs(h.db).insertMany([inv1, inv2, inv3, inv4, inv6, inv10].map(withDerivedFields));
  await insertTrips(h.db, [b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, bB]);

  t.test('lags, percentiles and leakage', async (t) => {
    const res = await get(PERIOD);
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.match(body, {
      tenant: TENANT_A,
      computedAt: NOW.toISOString(),
      asOf: { instant: NOW.toISOString() },
      period: { startDate: '2026-04-01', endDate: '2026-04-15', days: 15 },
    });
    // Billed lags: −1, 0.0833, 1, 3.5, 10 → median 1; p90 = 3.5 + 0.6 × 6.5 = 7.4.
    t.same(body.summary, {
      deliveredTrips: 7,
      billedTrips: 5,
      medianLagDays: 1,
      p90LagDays: 7.4,
      within1DayPct: 60,
      within3DaysPct: 60,
      within7DaysPct: 80,
      preBilledCount: 1,
      unbilledCount: 2,
      unbilledValue: 20_500,
      notDeliveredCount: 1,
      reason: null,
      unbilledNoLink: 1,
      unbilledCancelledLink: 1,
      unresolvedLinks: { count: 1, value: 10_000 },
    });
    // Most delivered trips first.
    t.match(body.byClient, { total: 2, listed: 2, limit: 20 });
    t.match(body.byClient.data, [
      { client: CLIENT_COMPANY, deliveredTrips: 6, billedTrips: 4, medianLagDays: 2.25, preBilledCount: 1, unbilledCount: 2, notDeliveredCount: 1 },
      { client: CLIENT_COMPANY_2, deliveredTrips: 1, billedTrips: 1, medianLagDays: 0.08, p90LagDays: 0.08, within1DayPct: 100, unbilledCount: 0 },
    ]);
    t.same(body.unbilledTrips, {
      total: 2,
      listed: 2,
      limit: 20,
      data: [
        {
          tripId: b5._id,
          client: CLIENT_COMPANY,
          offloadDate: new Date('2026-04-07T10:00:00-06:00').toISOString(),
          daysSinceOffload: 13.08,
          value: 10_500,
          reason: 'no invoice linked',
          idFinan: null,
        },
        {
          tripId: b6._id,
          client: CLIENT_COMPANY,
          offloadDate: new Date('2026-04-08T10:00:00-06:00').toISOString(),
          daysSinceOffload: 12.08,
          value: 10_000,
          reason: 'linked invoice cancelled',
          idFinan: inv6.id,
        },
      ],
    });
    t.same(body.preBilledTrips, { total: 1, listed: 1, limit: 20, data: [{ tripId: b3._id, client: CLIENT_COMPANY, lagDays: -1 }] });
  });

  t.test('no billed trip: statistics null with a reason', async (t) => {
    const res = await get(`${PERIOD}&client=${CLIENT_PERSON}`);
    assertConforms(t, res, 'GET', ROUTE);
    t.match(res.json().summary, {
      deliveredTrips: 0,
      billedTrips: 0,
      medianLagDays: null,
      p90LagDays: null,
      within1DayPct: null,
      reason: /no delivered trip with a linked invoice/,
    });
  });

  t.test('tenant isolation', async (t) => {
    // B's trip names A's invoice id: for B that link does not resolve.
    const b = await get(PERIOD, KEY_B);
    assertConforms(t, b, 'GET', ROUTE);
    t.match(b.json().summary, { deliveredTrips: 0, billedTrips: 0, unresolvedLinks: { count: 1 } });
  });

  t.test('parameter validation', async (t) => {
    for (const [query, detail] of [
      ['?limit=abc', /limit must be an integer between 1 and 100/],
      ['?groupBy=vehicle', /unknown query parameter 'groupBy'/],
    ] as const) {
      const res = await get(query);
      t.equal(res.statusCode, 400, query);
      assertConforms(t, res, 'GET', ROUTE);
      t.match(res.json().error.details.join(' | '), detail, query);
    }
  });
}
