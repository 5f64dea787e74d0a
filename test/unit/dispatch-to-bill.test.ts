import t from 'tap';
import {
  classifyDeliveries,
  dispatchToBill,
  dispatchToBillByClient,
  lagDays,
  preBilledTrips,
  tripFreightValue,
  tripOffloadDate,
} from '../../lib/analytics/dispatch-to-bill.ts';
import { parseMxDateTime as at } from '../../lib/time/mexico-city.ts';
import { leg, makeTrip } from '../fixtures/documents.ts';

t.test('lags keep their sign; ≤ 0 is pre-billed', async (t) => {
  t.equal(lagDays(at('2026-03-05T18:00'), at('2026-03-06T10:00')), 16 / 24);
  t.equal(lagDays(at('2026-03-05T18:00'), at('2026-03-05T07:00')), -11 / 24);
  const rows = [
    { tripId: 't1', offloadDate: at('2026-03-05T18:00'), invoiceDate: at('2026-03-06T10:00'), value: 1 }, // 0.6667
    { tripId: 't2', offloadDate: at('2026-03-05T18:00'), invoiceDate: at('2026-03-08T18:00'), value: 1 }, // 3
    { tripId: 't3', client: 'X', offloadDate: at('2026-03-05T18:00'), invoiceDate: at('2026-03-05T07:00'), value: 1 }, // −0.4583, billed at dispatch
    { tripId: 't4', offloadDate: at('2026-03-01T12:00'), invoiceDate: at('2026-03-11T12:00'), value: 1 }, // 10
    { tripId: 't5', offloadDate: at('2026-03-02T12:00'), invoiceDate: null, value: 8000.5 }, // delivered, unbilled
    { tripId: 't6', offloadDate: null, invoiceDate: at('2026-03-02T12:00'), value: 3000 }, // not delivered
  ];
  const { lags, summary } = dispatchToBill(rows);
  t.same(
    lags.map((l) => [l.tripId, l.lagDays, l.preBilled]),
    [
      ['t1', 0.67, false],
      ['t2', 3, false],
      ['t3', -0.46, true],
      ['t4', 10, false],
    ],
  );
  t.equal(lags[2]!.client, 'X');
  // sorted: −0.4583, 0.6667, 3, 10 → median (0.6667 + 3) / 2 = 1.8333; p90 rank 2.7 → 3 + 0.7 × 7 = 7.9
  t.same(summary, {
    deliveredTrips: 5,
    billedTrips: 4,
    medianLagDays: 1.83,
    p90LagDays: 7.9,
    within1DayPct: 50,
    within3DaysPct: 75,
    within7DaysPct: 75,
    preBilledCount: 1,
    unbilledCount: 1,
    unbilledValue: 8000.5,
    notDeliveredCount: 1,
  });
});

t.test('zero lag is pre-billed; nothing billed → nulls with a reason', async (t) => {
  const z = dispatchToBill([{ tripId: 'z', offloadDate: 1000, invoiceDate: 1000, value: 0 }]);
  t.equal(z.lags[0]!.preBilled, true);
  t.equal(z.summary.within1DayPct, 100);
  const none = dispatchToBill([{ tripId: 'u', offloadDate: 1000, invoiceDate: null, value: 500 }]);
  t.match(none.summary, {
    billedTrips: 0,
    medianLagDays: null,
    p90LagDays: null,
    within1DayPct: null,
    unbilledCount: 1,
    unbilledValue: 500,
    reason: /no delivered trip/,
  });
  t.same(dispatchToBill([]).summary.deliveredTrips, 0);
});

t.test('trip helpers', async (t) => {
  const trip = makeTrip({
    legs: [
      leg({ loadDate: '2026-03-05T08:00', unloadDate: '2026-03-05T18:00', pricing: { billedFreight: 10_000, toll: 500 } }),
      leg({ loadDate: '2026-03-06T08:00', unloadDate: '2026-03-07T09:00', pricing: { billedFreight: 2000.1 } }),
    ],
  });
  t.equal(tripOffloadDate(trip), at('2026-03-07T09:00'), 'the last delivery');
  t.equal(tripFreightValue(trip), 12_500.1, 'Σ totalFreight (tolls included)');
  const open = makeTrip({ legs: [leg(), leg({ unloadDate: null })] });
  t.equal(tripOffloadDate(open), null, 'a leg still on the road');
  t.equal(tripOffloadDate(makeTrip({ legs: [] })), null);
});

t.test('deliveries sorted by link state', async (t) => {
  const period = { start: at('2026-03-01T00:00'), end: at('2026-03-31T23:59') };
  const now = at('2026-04-02T09:00');
  const legs = (unload: string | null, ...freightC: number[]) => freightC.map((c) => ({ unloadDate: unload === null ? null : at(unload), totalFreightC: c }));
  const d = classifyDeliveries(
    [
      { _id: 'T1', client: 'A', idFinan: 'F1', legs: legs('2026-03-05T10:00', 100_00, 50_50), inv: [{ date: at('2026-03-06T10:00'), cancelled: false }] },
      { _id: 'T2', client: 'A', idFinan: null, legs: legs('2026-03-20T09:00', 1_000_00), inv: [] },
      { _id: 'T3', client: 'B', idFinan: 'F3', legs: legs('2026-03-10T09:00', 200_00), inv: [{ date: at('2026-03-11T09:00'), cancelled: true }] },
      { _id: 'T4', client: 'B', idFinan: 'LEGACY', legs: legs('2026-03-12T09:00', 300_00), inv: [] },
      { _id: 'T5', client: 'B', idFinan: null, legs: [...legs('2026-03-12T09:00', 10_00), ...legs(null, 5_00)], inv: [] },
      { _id: 'T6', client: 'A', idFinan: null, legs: legs('2026-04-01T09:00', 70_00), inv: [] },
    ],
    period,
    now,
  );
  t.same(
    d.rows,
    [
      { tripId: 'T1', client: 'A', value: 150.5, offloadDate: at('2026-03-05T10:00'), invoiceDate: at('2026-03-06T10:00') },
      { tripId: 'T2', client: 'A', value: 1000, offloadDate: at('2026-03-20T09:00'), invoiceDate: null },
      { tripId: 'T3', client: 'B', value: 200, offloadDate: at('2026-03-10T09:00'), invoiceDate: null },
      { tripId: 'T5', client: 'B', value: 15, offloadDate: null, invoiceDate: null },
    ],
    'T4 unresolved and T6 delivered after the period are not lag rows',
  );
  t.same(
    d.unbilled.map((u) => [u.tripId, u.reason, u.daysSinceOffload, u.value]),
    [
      ['T3', 'linked invoice cancelled', 23, 200], // Mar 10 09:00 → Apr 2 09:00
      ['T2', 'no invoice linked', 13, 1000],
    ],
  );
  t.same([d.noLink, d.cancelledLink, d.unresolved], [1, 1, { count: 1, value: 300 }]);

  const byClient = dispatchToBillByClient(d.rows);
  t.same(
    byClient.map((c) => [c.client, c.summary.deliveredTrips, c.summary.billedTrips, c.summary.unbilledValue, c.summary.notDeliveredCount]),
    [
      ['A', 2, 1, 1000, 0],
      ['B', 1, 0, 200, 1],
    ],
  );
});

t.test('pre-billed trips, most negative lag first', async (t) => {
  const lags = [
    { tripId: 'b', lagDays: -0.5, preBilled: true },
    { tripId: 'x', lagDays: 2, preBilled: false },
    { tripId: 'a', lagDays: -0.5, preBilled: true },
    { tripId: 'c', lagDays: -3, preBilled: true },
  ];
  t.same(
    preBilledTrips(lags).map((l) => l.tripId),
    ['c', 'a', 'b'],
  );
});
