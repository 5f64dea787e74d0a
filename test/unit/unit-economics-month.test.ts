/**
 * Unit economics' months kept from their days (lib/analytics/unit-economics-month.ts), pure: a
 * month folded from hand-made days, and periods read from months and days, against sums, labels,
 * pairs and costs computed by hand.
 */
import t, { type Test } from 'tap';
import {
  costPoolsOf,
  periodUnitsOf,
  periodGroups,
  periodUnits,
  rollUpUnitEconomicsDays,
  type UnitCostDoc,
  type UnitLeg,
} from '../../lib/analytics/unit-economics-day.ts';
import { foldUnitEconomicsMonth } from '../../lib/analytics/unit-economics-month.ts';
import { daysOfMonth, wholeMonths } from '../../lib/time/calendar-months.ts';
import { noon2026, trip } from '../helpers/unit-economics-fixtures.ts';

const TENANT = 'TGO850101AB1';
const leg = (month: number, day: number, km: number, revenue: number): UnitLeg => ({
  at: noon2026(month, day),
  kmM: km * 1000,
  revenueC: revenue * 100,
  tollC: 0,
  loadedM: 1000 * 1000,
  offloadedM: 990 * 1000,
});
const cost = (month: number, day: number, over: Partial<UnitCostDoc>): UnitCostDoc => ({
  date: noon2026(month, day),
  category: 'fuel',
  netC: 0,
  vehicle: null,
  tripId: null,
  keys: [],
  ...over,
});

const DAYS = [...daysOfMonth('2026-03'), ...daysOfMonth('2026-04')];
const days = rollUpUnitEconomicsDays(
  TENANT,
  DAYS,
  [
    // Delivered on two days of March: one trip in the month.
    trip({}, [leg(3, 2, 100, 1000), leg(3, 5, 200, 3000)]),
    // The same grouping fields under a lesser name, delivered on 30 March and 2 April: a pair pending past March.
    trip({ driverName: 'RAUL HERNANDEZ G.' }, [leg(3, 30, 50, 500), leg(4, 2, 70, 700)]),
    trip({ vehicle: 'VEH-2', plate: 'XB5678C' }, [leg(4, 10, 300, 4000)]),
  ],
  [
    cost(3, 3, { netC: 100_000, keys: ['XA1234B'] }),
    cost(3, 20, { netC: 50_000, keys: ['XA1234B'] }),
    cost(3, 20, { category: 'tolls', netC: 30_000, vehicle: 'VEH-2' }),
    cost(4, 10, { category: 'maintenance', netC: 20_000, tripId: 'T-1' }),
  ],
);
const march = foldUnitEconomicsMonth(TENANT, '2026-03', days)!;
const april = foldUnitEconomicsMonth(TENANT, '2026-04', days)!;

t.test('a month: one combination per grouping, labels the greatest, trips once, the pair past the month kept', async (t) => {
  t.equal(march._id, `${TENANT}|2026-03`);
  t.same(march.strings, [
    'CIN010203KL5',
    'VEH-1',
    'XA1234B',
    'T3S2',
    'HEGR751212AB3',
    'RAUL HERNANDEZ GARCIA',
    'OR000001',
    'TERMINAL',
    'Veracruz',
    'VER',
    'DE000001',
    'ESTACION 1',
    'Xalapa',
  ]);
  t.same([...march.units], [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 9], 'one combination: "GARCIA" > "G." (A > .)');
  // trips 2 (the first once: +1 +1 −1), legs 3, km 350, revenue 4,500.00, litres 3,000 and 2,970, tolls 0.
  t.same([...march.rows], [0, 2, 3, 350_000, 450_000, 0, 3_000_000, 2_970_000]);
  t.same(march.pairs, [{ u: 0, next: '2026-04-02', trips: 1 }]);
  t.same(march.costs, {
    documents: [2, 1, 0, 0, 0, 0],
    spread: [{ c: 'fuel', keys: ['XA1234B'], netC: 150_000 }],
    vehicle: [{ v: 'VEH-2', c: 'tolls', netC: 30_000 }],
    trip: [],
  });
  t.equal(foldUnitEconomicsMonth(TENANT, '2026-05', days), null, 'a month without days is none');
});

/** What a period from March and April reads, their months as `part` gives them (their combinations, or their tables). */
function periodChecks(t: Test, part: (m: typeof march) => Parameters<typeof periodUnitsOf>[0][number]): ReturnType<typeof periodGroups> {
  const total = (parts: Parameters<typeof periodUnitsOf>[0], to: string) => periodGroups(periodUnitsOf(parts, to), {}).total;
  // Three trips, 5 legs, 720 km, 9,200.00.
  t.same(
    total([part(march), part(april)], '2026-04-30'),
    { trips: 3, legs: 5, km: 720, revenueC: 920_000, loaded: 5000, offloaded: 4950, tollC: 0 },
    'two months',
  );
  t.same(
    total([part(march)], '2026-03-31'),
    { trips: 2, legs: 3, km: 350, revenueC: 450_000, loaded: 3000, offloaded: 2970, tollC: 0 },
    'March alone: its pair past the month is not taken back',
  );
  const aprilFirstDays = days.filter((d) => d.day >= '2026-04-01' && d.day <= '2026-04-05');
  t.same(
    total([part(march), ...aprilFirstDays], '2026-04-05'),
    { trips: 2, legs: 4, km: 420, revenueC: 520_000, loaded: 4000, offloaded: 3960, tollC: 0 },
    'March and 1–5 April: the trip delivered on 30 March and 2 April counts once',
  );
  const g = periodGroups(periodUnitsOf([part(march), part(april)], '2026-04-30'), {});
  t.same(
    g.byDriver.map((d) => [d.driver, d.name, d.trips]),
    [['HEGR751212AB3', 'RAUL HERNANDEZ GARCIA', 3]],
  );
  t.same(
    g.byVehicle.map((v) => [v.vehicle, v.plate, v.trips, v.km]),
    [
      ['VEH-1', 'XA1234B', 2, 420],
      ['VEH-2', 'XB5678C', 1, 300],
    ],
  );
  return g;
}

t.test('a period from months and days: each trip once, as from the days', async (t) => {
  periodChecks(t, (m) => m);
  t.same(
    periodGroups(periodUnits(days, '2026-03-01', '2026-04-30'), {}).total,
    { trips: 3, legs: 5, km: 720, revenueC: 920_000, loaded: 5000, offloaded: 4950, tollC: 0 },
    'their days',
  );
});

t.test("a period from months' tables and days: the same groups, each trip once, the km on each vehicle", async (t) => {
  const tables = (m: typeof march) => ({ strings: m.strings, tables: m.tables });
  // March's one combination: one group each; its pair past the month by those groups.
  t.same(
    [march.tables.rows, [...march.tables.client.sums], [...march.tables.vehicle.labels].map((i) => march.strings[i])],
    [1, [2, 3, 350_000, 450_000, 0, 3_000_000, 2_970_000], ['XA1234B', 'T3S2']],
  );
  t.same(march.tables.pending, [{ g: [0, 0, 0, 0], next: '2026-04-02', trips: 1 }]);
  const g = periodChecks(t, tables);
  t.same(
    g.byClient.map((c) => [c.client, c.trips, c.km]),
    [['CIN010203KL5', 3, 720]],
  );
  // One client and one driver on both vehicles (420 + 300 km), one route.
  const km = g.kmOnVehicles({ client: new Set(['CIN010203KL5']), driver: new Set(['HEGR751212AB3']), route: new Set(['OR000001→DE000001']) });
  const pairs = (rows: { key: string; vehicle: string; km: number }[]) => rows.map((r) => [r.key, r.vehicle, r.km]);
  t.same(pairs(km.client), [
    ['CIN010203KL5', 'VEH-1', 420],
    ['CIN010203KL5', 'VEH-2', 300],
  ]);
  t.same(pairs(km.driver), [
    ['HEGR751212AB3', 'VEH-1', 420],
    ['HEGR751212AB3', 'VEH-2', 300],
  ]);
  t.same(pairs(km.route), [
    ['OR000001→DE000001', 'VEH-1', 420],
    ['OR000001→DE000001', 'VEH-2', 300],
  ]);
  t.same(g.kmOnVehicles({ client: new Set(['NOBODY']), driver: new Set(), route: new Set() }).client, [], 'keys not asked: no km');
  t.throws(() => periodGroups(periodUnitsOf([tables(march)], '2026-03-31'), { client: 'CIN010203KL5' }), RangeError, 'a filter reads the combinations');
});

t.test("a period's cost pools from months and days", async (t) => {
  t.same(march.vehiclePlates, [{ v: 'VEH-1', p: ['XA1234B'] }]);
  t.same(april.vehiclePlates, [
    { v: 'VEH-1', p: ['XA1234B'] },
    { v: 'VEH-2', p: ['XB5678C'] },
  ]);
  const pools = costPoolsOf([march, april]);
  t.same(pools.documents, { fuel: 2, tolls: 1, maintenance: 1, tyres: 0, insurance: 0, subcontractedFreight: 0 });
  t.same(Object.fromEntries(pools.byVehicle), {
    'VEH-1': { fuel: 150_000, tolls: 0, maintenance: 0, tyres: 0, insurance: 0, subcontractedFreight: 0 },
    'VEH-2': { fuel: 0, tolls: 30_000, maintenance: 0, tyres: 0, insurance: 0, subcontractedFreight: 0 },
  });
  t.same(Object.fromEntries(pools.byTrip), { 'T-1': { fuel: 0, tolls: 0, maintenance: 20_000, tyres: 0, insurance: 0, subcontractedFreight: 0 } });
  t.same(pools.spread, { fuel: 0, tolls: 0, maintenance: 0, tyres: 0, insurance: 0, subcontractedFreight: 0 });
});

t.test("a vehicle's every plate of the period names it; a plate two vehicles carried names neither", async (t) => {
  // VEH-1 carries XA1234B on 3 May and XZ9999Z on 4 May (its label: the greatest, XZ9999Z); VEH-2 carries XZ9999Z on 20 May.
  const mayDays = rollUpUnitEconomicsDays(
    TENANT,
    daysOfMonth('2026-05'),
    [
      trip({}, [leg(5, 3, 300, 1000)]),
      trip({ plate: 'XZ9999Z' }, [leg(5, 4, 200, 1000)]),
      trip({ vehicle: 'VEH-2', plate: 'XZ9999Z' }, [leg(5, 20, 500, 1000)]),
    ],
    [cost(5, 10, { netC: 200_000, keys: ['XA1234B'] }), cost(5, 11, { netC: 70_000, keys: ['XZ9999Z'] })],
  );
  t.same(
    mayDays.map((d) => [d.day, d.vehiclePlates]),
    [
      ['2026-05-03', [{ v: 'VEH-1', p: ['XA1234B'] }]],
      ['2026-05-04', [{ v: 'VEH-1', p: ['XZ9999Z'] }]],
      ['2026-05-10', []],
      ['2026-05-11', []],
      ['2026-05-20', [{ v: 'VEH-2', p: ['XZ9999Z'] }]],
    ],
  );
  const may = foldUnitEconomicsMonth(TENANT, '2026-05', mayDays)!;
  t.same(may.vehiclePlates, [
    { v: 'VEH-1', p: ['XA1234B', 'XZ9999Z'] },
    { v: 'VEH-2', p: ['XZ9999Z'] },
  ]);
  t.same(
    periodGroups(periodUnitsOf([may], '2026-05-31'), {}).byVehicle.map((v) => [v.vehicle, v.plate]),
    [
      ['VEH-1', 'XZ9999Z'],
      ['VEH-2', 'XZ9999Z'],
    ],
    'the label is the greatest plate',
  );
  // XA1234B (the lesser of VEH-1's plates) names VEH-1: 2,000.00 there; XZ9999Z (VEH-1's and VEH-2's) names neither: spread.
  const zero = { fuel: 0, tolls: 0, maintenance: 0, tyres: 0, insurance: 0, subcontractedFreight: 0 };
  for (const pools of [costPoolsOf([may]), costPoolsOf(mayDays)]) {
    t.same(Object.fromEntries(pools.byVehicle), { 'VEH-1': { ...zero, fuel: 200_000 } });
    t.same(pools.spread, { ...zero, fuel: 70_000 });
  }
  // 3–10 May: only VEH-1 carried XZ9999Z then, so it names VEH-1 too.
  const early = costPoolsOf(mayDays.filter((d) => d.day <= '2026-05-11'));
  t.same(Object.fromEntries(early.byVehicle), { 'VEH-1': { ...zero, fuel: 270_000 } });
});

t.test('the months wholly in a period', async (t) => {
  t.same(wholeMonths('2025-11-15', '2026-11-15'), [
    '2025-12',
    '2026-01',
    '2026-02',
    '2026-03',
    '2026-04',
    '2026-05',
    '2026-06',
    '2026-07',
    '2026-08',
    '2026-09',
    '2026-10',
  ]);
  t.same(wholeMonths('2026-02-01', '2026-02-28'), ['2026-02']);
  t.same(wholeMonths('2026-02-01', '2026-02-27'), []);
  t.same(wholeMonths('2026-02-02', '2026-03-31'), ['2026-03']);
  t.equal(daysOfMonth('2024-02').length, 29);
  t.equal(daysOfMonth('2026-12').pop(), '2026-12-31');
});
