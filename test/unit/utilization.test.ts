import t from 'tap';
import {
  fleetUtilization,
  idleFleet,
  idleVehicles,
  lastActivityByVehicle,
  lastActivityOf,
  legActiveDays,
  utilization,
  utilizationTotals,
  utilizationTrip,
} from '../../lib/analytics/utilization.ts';
import { parseMxDateTime as at } from '../../lib/time/mexico-city.ts';
import { diesel, leg, makeTrip } from '../fixtures/documents.ts';

const march = { from: '2026-03-01', to: '2026-03-31' };

t.test('active days of a leg', async (t) => {
  t.same(legActiveDays({ date: 20260302, loadDate: at('2026-03-02T08:00'), unloadDate: at('2026-03-03T10:00') }), ['2026-03-02', '2026-03-03']);
  t.same(
    legActiveDays({ date: 20260302, loadDate: at('2026-03-02T23:30'), unloadDate: at('2026-03-03T00:30') }),
    ['2026-03-02', '2026-03-03'],
    'Mexico City days',
  );
  t.same(legActiveDays({ date: 20260305, loadDate: null, unloadDate: null }), ['2026-03-05'], 'falls back to the compact date');
  t.same(legActiveDays({ date: 20260305, loadDate: at('2026-03-06T08:00'), unloadDate: null }), ['2026-03-06'], 'loaded, not yet offloaded');
  t.same(legActiveDays({ date: 20261399, loadDate: null, unloadDate: null }), [], 'an invalid compact date yields nothing');
});

t.test('utilization ratio', async (t) => {
  t.same(utilization(['2026-03-02', '2026-03-03', '2026-03-03', '2026-04-01'], march), { activeDays: 2, daysInPeriod: 31, utilization: { value: 0.0645 } });
  t.same(utilization([], { from: '2026-03-02', to: '2026-03-01' }).utilization, { value: null, reason: 'no days in period (division by zero)' });
  t.throws(() => utilization([], { from: '2026-03-01', to: 'soon' }), RangeError);
});

const trips = [
  makeTrip({
    vehicle: { id: 'V1', plate: 'AAA-1' },
    driver: { id: 'D1', name: 'Ana' },
    legs: [
      leg({
        loadDate: '2026-03-02T08:00',
        unloadDate: '2026-03-03T10:00',
        distanceKm: 300,
        products: [diesel(20_000, 19_980)],
        pricing: { billedFreight: 10_000, toll: 700 },
      }),
      leg({
        loadDate: '2026-03-10T08:00',
        unloadDate: '2026-03-10T18:00',
        distanceKm: 150,
        products: [diesel(10_000, 9990)],
        pricing: { billedFreight: 5000 },
      }),
    ],
  }),
  makeTrip({
    vehicle: { id: 'V1', plate: 'AAA-1' },
    driver: { id: 'D2', name: 'Beto' },
    legs: [
      leg({ loadDate: '2026-03-10T19:00', unloadDate: '2026-03-10T23:00', distanceKm: 50, products: [diesel(5000, 5000)], pricing: { billedFreight: 1000 } }),
    ],
  }),
  // Crosses the period start: only Mar 1 counts.
  makeTrip({
    vehicle: { id: 'V2', plate: 'BBB-2' },
    driver: { id: 'D2', name: 'Beto' },
    legs: [
      leg({ loadDate: '2026-02-27T08:00', unloadDate: '2026-03-01T10:00', distanceKm: 0, products: [diesel(8000, 8000)], pricing: { billedFreight: 8000 } }),
    ],
  }),
  makeTrip({ vehicle: { id: 'V3', plate: 'CCC-3' }, legs: [leg({ date: 20260317, loadDate: null, unloadDate: null })] }),
  makeTrip({ vehicle: { id: 'V4', plate: 'DDD-4' }, legs: [leg({ loadDate: '2026-03-18T06:00', unloadDate: '2026-03-18T20:00' })] }),
  makeTrip({ vehicle: { id: 'V5', plate: 'EEE-5' }, legs: [leg({ loadDate: '2026-04-02T06:00' })] }), // outside March
].map(utilizationTrip);

t.test('fleet utilization per vehicle', async (t) => {
  const rows = fleetUtilization(trips, 'vehicle', march);
  t.same(
    rows.map((r) => r.key),
    ['V1', 'V2', 'V3', 'V4'],
  );
  const v1 = rows[0]!;
  // Mar 2, 3, 10 → 3 / 31 = 0.0968; 16,000 MXN over 500 km = 32 / km
  t.match(v1, {
    label: 'AAA-1',
    trips: 2,
    legs: 3,
    activeDays: 3,
    daysInPeriod: 31,
    utilization: { value: 0.0968 },
    litres: 35_000,
    litresBasis: 'loaded',
    km: 500,
    revenue: 16_000,
    revenuePerKm: { value: 32 },
  });
  const v2 = rows[1]!;
  t.match(v2, { trips: 1, activeDays: 1, km: 0, revenue: 8000, revenuePerKm: { value: null, reason: 'no km (division by zero)' } });
  t.equal(fleetUtilization(trips, 'vehicle', march, 'offloaded')[0]!.litres, 34_970);
});

t.test('fleet utilization per driver', async (t) => {
  const rows = fleetUtilization(trips.slice(0, 3), 'driver', march);
  t.same(
    rows.map((r) => [r.key, r.label, r.trips, r.legs, r.activeDays, r.revenue]),
    [
      ['D1', 'Ana', 1, 2, 3, 15_000],
      ['D2', 'Beto', 2, 2, 2, 9000], // Mar 10 (V1) and Mar 1 (V2)
    ],
  );
});

t.test('idle vehicles: no activity in the N days ending on asOf', async (t) => {
  const last = lastActivityByVehicle(trips);
  t.equal(last.get('V1'), at('2026-03-10T23:00'));
  t.equal(last.get('V3'), at('2026-03-17T00:00'), 'compact date when no instants');
  const asOf = at('2026-03-31T12:00');
  const idle = idleVehicles(['V1', 'V2', 'V3', 'V4', 'V6'], last, asOf, 14);
  t.same(
    idle.map((v) => [v.vehicle, v.daysSinceLastActivity, v.idle]),
    [
      ['V1', 21, true],
      ['V2', 30, true],
      ['V3', 14, true], // Mar 17 → Mar 31: 14 days, nothing on Mar 18..31
      ['V4', 13, false], // Mar 18 is inside the window
      ['V5', -2, false], // scheduled after asOf
      ['V6', null, true], // never seen
    ],
  );
});

t.test('last activity from the per-vehicle maxima', async (t) => {
  const asOf = at('2026-03-31T12:00');
  t.equal(
    lastActivityOf({ lastUnload: at('2026-03-10T23:00'), lastLoad: at('2026-03-10T19:00'), lastLegDate: 20260310 }, asOf),
    at('2026-03-10T23:00'),
    'the later instant',
  );
  t.equal(
    lastActivityOf({ lastUnload: at('2026-03-08T10:00'), lastLoad: at('2026-03-12T06:00'), lastLegDate: 20260312 }, asOf),
    at('2026-03-12T06:00'),
    'a leg loaded, not yet offloaded',
  );
  t.equal(lastActivityOf({ lastUnload: null, lastLoad: at('2026-04-02T06:00'), lastLegDate: 20260402 }, asOf), asOf, 'a scheduled leg counts as asOf');
  t.equal(lastActivityOf({ lastUnload: null, lastLoad: null, lastLegDate: 20260317 }, asOf), at('2026-03-17T00:00'), 'the leg date without instants');
  t.equal(lastActivityOf({ lastUnload: null, lastLoad: null, lastLegDate: null }, asOf), null);
});

t.test('idle fleet: longest idle first, never-seen first of all', async (t) => {
  const asOf = at('2026-03-31T12:00');
  const fleet = idleFleet(
    [
      { vehicle: 'V1', plate: 'AAA-1', lastUnload: at('2026-03-10T23:00'), lastLoad: null, lastLegDate: 20260310 },
      { vehicle: 'V4', plate: 'DDD-4', lastUnload: at('2026-03-18T20:00'), lastLoad: null, lastLegDate: 20260318 },
      { vehicle: 'V7', plate: 'GGG-7', lastUnload: null, lastLoad: null, lastLegDate: null },
      { vehicle: 'V3', plate: 'CCC-3', lastUnload: null, lastLoad: null, lastLegDate: 20260317 },
    ],
    asOf,
    14,
  );
  t.same(fleet, {
    fleetSize: 4,
    idleCount: 3,
    data: [
      { vehicle: 'V7', plate: 'GGG-7', lastActivity: null, daysSinceLastActivity: null },
      { vehicle: 'V1', plate: 'AAA-1', lastActivity: new Date(at('2026-03-10T23:00')).toISOString(), daysSinceLastActivity: 21 },
      { vehicle: 'V3', plate: 'CCC-3', lastActivity: new Date(at('2026-03-17T00:00')).toISOString(), daysSinceLastActivity: 14 },
    ],
  });
});

t.test('utilization totals over the rows', async (t) => {
  const rows = fleetUtilization(trips, 'vehicle', march);
  // V1 3 days, V2 1, V3 1, V4 1 → 6 of 4 × 31 = 124 unit-days = 0.0484.
  // V3 and V4 carry the fixture's default leg (300 km, 10,000 MXN): 16,000 + 8,000 + 10,000 + 10,000 = 44,000 MXN
  // over 500 + 0 + 300 + 300 = 1,100 km = 40 MXN/km.
  t.match(utilizationTotals(rows, 31), {
    units: 4,
    trips: 5,
    legs: 6,
    activeUnitDays: 6,
    unitDaysInPeriod: 124,
    utilization: { value: 0.0484 },
    km: 1100,
    revenue: 44_000,
    revenuePerKm: { value: 40 },
  });
  t.same(utilizationTotals([], 31).utilization, { value: null, reason: 'no active units in the period (division by zero)' });
});
