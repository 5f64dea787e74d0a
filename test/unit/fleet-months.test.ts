/**
 * Fleet utilization's months (lib/analytics/fleet-month-rollup.ts) and the period fold over
 * months, partial days and a first day's carry (fleet-period-fold.ts), on trips small enough to
 * count by hand. The expected figures are the hand counts written beside each case.
 */
import t from 'tap';
import { encodeFleetDay, rollUpFleetDays, type FleetTrip } from '../../lib/analytics/fleet-day-rollup.ts';
import { EVERY_CLIENT, encodeFleetMonth, foldFleetMonth } from '../../lib/analytics/fleet-month-rollup.ts';
import { fleetActivityOf, foldFleetPeriod, type FleetPeriodParts } from '../../lib/analytics/fleet-period-fold.ts';
import { daysOfMonth, wholeMonths } from '../../lib/time/calendar-months.ts';
import { parseMxDateTime as at } from '../../lib/time/mexico-city.ts';

const T = 'TGO850101AB1';

function trip(id: string, client: string, vehicle: string, legs: [string, string | null, number][]): FleetTrip {
  return {
    _id: id,
    client,
    vehicleId: vehicle,
    plate: `P-${vehicle}`,
    driverId: 'D1',
    driverName: 'ANA',
    legs: legs.map(([load, unload, km]) => ({
      date: Number(load.slice(0, 10).replace(/-/g, '')),
      loadDate: at(load),
      unloadDate: unload === null ? null : at(unload),
      distanceKm: km,
      billedFreight: 1000,
      loaded: 100,
      offloaded: 90,
    })),
    raw: legs.map(([load, unload]) => ({ loadDate: at(load), unloadDate: unload === null ? null : at(unload) })),
  };
}

const TRIPS: FleetTrip[] = [
  // Leg 1 active 03-30 … 04-02 (4 days), leg 2 on 04-10: one trip, two legs, pieces [03-30, 04-02] and [04-10] (a pair).
  trip('t1', 'CIN010203KL5', 'V1', [
    ['2026-03-30T08:00', '2026-04-02T10:00', 100],
    ['2026-04-10T08:00', '2026-04-10T18:00', 50],
  ]),
  // Leg on 04-30 … 05-01, in April and May; and a second leg in transit loaded 05-20.
  trip('t2', 'LOG990101AA1', 'V1', [
    ['2026-04-30T20:00', '2026-05-01T06:00', 10],
    ['2026-05-20T08:00', null, 5],
  ]),
  // Another vehicle, April 15 and May 3: pieces [04-15] and [05-03], a pair ending in April whose next piece starts in May.
  trip('t3', 'CIN010203KL5', 'V2', [
    ['2026-04-15T08:00', '2026-04-15T12:00', 7],
    ['2026-05-03T08:00', '2026-05-03T12:00', 3],
  ]),
];

const allDays = [...daysOfMonth('2026-03'), ...daysOfMonth('2026-04'), ...daysOfMonth('2026-05')];
const days = rollUpFleetDays(T, allDays, TRIPS);
const months = ['2026-03', '2026-04', '2026-05'].flatMap((m) => foldFleetMonth(T, m, days));

/** The parts a report of [from, to] reads for a client (or every client), as readFreshFleetPeriod gathers them. */
function partsOf(from: string, to: string, client: string): FleetPeriodParts {
  const whole = wholeMonths(from, to);
  const inWhole = (d: string): boolean => whole.includes(d.slice(0, 7));
  const stored = days.map(encodeFleetDay);
  return {
    carry: stored.find((d) => d.day === from) ?? null,
    days: stored.filter((d) => d.day >= from && d.day <= to && !inWhole(d.day)),
    months: months.filter((m) => whole.includes(m.month) && m.client === client).map(encodeFleetMonth),
  };
}

t.test('a month keeps every client once and each client apart', async (t) => {
  t.same(
    months.filter((m) => m.month === '2026-04').map((m) => m.client),
    ['*', 'CIN010203KL5', 'LOG990101AA1'],
  );
  const april = months.find((m) => m.month === '2026-04' && m.client === EVERY_CLIENT);
  t.same(april?.units, [
    ['V1', 'P-V1', 'D1', 'ANA'],
    ['V2', 'P-V2', 'D1', 'ANA'],
  ]);
  // V1 active on April 1, 2, 10 and 30: bits 0, 1, 9, 29.
  t.equal(april?.rows[0]?.[1], 2 ** 0 + 2 ** 1 + 2 ** 9 + 2 ** 29);
  // V2 on April 15 (bit 14).
  t.equal(april?.rows[1]?.[1], 2 ** 14);
  // t3's pair (04-15, 05-03) is kept apart, one trip to take back; t1's (04-02, 04-10) is netted in V1's row: V1's trips
  // there are t1's piece starting 04-10 less that pair (its first piece started in March: a period's carry counts it)
  // and t2's piece starting 04-30: 1 − 1 + 1.
  t.same(
    april?.pending.map((p) => [p[0], p[1], p[2]]),
    [[1, '2026-05-03', 1]],
  );
  t.equal(april?.rows[0]?.[2], 1);
});

t.test('a period of whole months, partial days and a carry counts as by hand', async (t) => {
  const fold = (from: string, to: string, client = EVERY_CLIENT, scope = {}) =>
    Object.fromEntries(
      [...foldFleetPeriod(partsOf(from, to, client), 'vehicle', { from, to }, scope)].map(([k, u]) => [
        k,
        [u.trips, u.legs, u.inTransit, u.activeDays, u.km, u.label],
      ]),
    );

  // April whole: t1 (both legs meet April: the first through its carry on 04-01), t2 (its first leg on 04-30), t3.
  // V1: trips t1, t2 = 2; legs 2 + 1 = 3; none in transit; active 04-01, 02, 10, 30 = 4; km 100 + 50 + 10 = 160.
  t.same(fold('2026-04-01', '2026-04-30'), { V1: [2, 3, 0, 4, 160, 'P-V1'], V2: [1, 1, 0, 1, 7, 'P-V2'] });
  // 03-31 … 05-19: March's last day (partial), April whole, May 1–19 (partial): t1 and t2's first leg; t2's May 20 leg out.
  // V1: trips 2; legs 3; active 03-31, 04-01, 02, 10, 30, 05-01 = 6; km 160. V2: t3 once (its pair taken back), legs 2,
  // active 04-15 and 05-03, km 10.
  t.same(fold('2026-03-31', '2026-05-19'), { V1: [2, 3, 0, 6, 160, 'P-V1'], V2: [1, 2, 0, 2, 10, 'P-V2'] });
  // 04-01 … 05-31 (April and May whole): t2's two pieces both meet it, the trip once; its second leg in transit.
  // V1: trips 2; legs 4; in transit 1; active 04-01, 02, 10, 30, 05-01, 05-20 = 6; km 165.
  t.same(fold('2026-04-01', '2026-05-31'), { V1: [2, 4, 1, 6, 165, 'P-V1'], V2: [1, 2, 0, 2, 10, 'P-V2'] });
  // April and May 1–2: t3's next piece (05-03) is after the period, its pair is not taken back: one trip, one leg.
  t.same(fold('2026-04-01', '2026-05-02').V2, [1, 1, 0, 1, 7, 'P-V2']);
  // One client: CIN010203KL5 has t1 (V1) and t3 (V2) in April.
  t.same(fold('2026-04-01', '2026-04-30', 'CIN010203KL5', { client: 'CIN010203KL5' }), { V1: [1, 2, 0, 3, 150, 'P-V1'], V2: [1, 1, 0, 1, 7, 'P-V2'] });
  // A vehicle filter: V2 alone.
  t.same(fold('2026-04-01', '2026-04-30', EVERY_CLIENT, { vehicle: 'V2' }), { V2: [1, 1, 0, 1, 7, 'P-V2'] });
});

t.test("the idle check's window reads the months' latest activity", async (t) => {
  const april = months.filter((m) => m.month === '2026-04' && m.client === EVERY_CLIENT).map(encodeFleetMonth);
  const may = days.filter((d) => d.day.startsWith('2026-05')).map(encodeFleetDay);
  const rows = fleetActivityOf({ days: may, months: april }, undefined, false);
  // V1's legs dated in April: 04-10 (t1) and 04-30 (t2); in May: 05-20 (t2). Past window: the latest leg day, 2026-05-20,
  // and the latest load among legs dated up to it (t2's 05-20 08:00). V2: its May 3 leg.
  t.same(rows.map((r) => [r.vehicle, r.lastLegDate, r.lastLoad]).sort(), [
    ['V1', 20260520, at('2026-05-20T08:00')],
    ['V2', 20260503, at('2026-05-03T08:00')],
  ]);
});
