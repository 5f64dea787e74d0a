/**
 * Unit economics' kept days (lib/analytics/unit-economics-day.ts), pure: a period's groups from
 * days rolled up from hand-made trips, against sums and labels computed by hand.
 */
import t from 'tap';
import { periodGroups, periodUnits, rollUpUnitEconomicsDays, type UnitLeg } from '../../lib/analytics/unit-economics-day.ts';
import { noon2026, trip } from '../helpers/unit-economics-fixtures.ts';

// Noon in Mexico City of a day of March 2026.
const at = (day: number): number => noon2026(3, day);
const leg = (day: number | null, km: number, revenue: number): UnitLeg => ({
  at: day === null ? null : at(day),
  kmM: km * 1000,
  revenueC: revenue * 100,
  tollC: 0,
  loadedM: 1000 * 1000,
  offloadedM: 990 * 1000,
});
const DAYS = Array.from({ length: 31 }, (_, i) => `2026-03-${String(i + 1).padStart(2, '0')}`);

t.test('one driver under two names, one trip over two days: one group, the greatest name, the trip counted once', async (t) => {
  const days = rollUpUnitEconomicsDays(
    'TGO850101AB1',
    DAYS,
    [
      // First seen under the lesser spelling, then the greater: the greatest wins whatever the order.
      trip({ driverName: 'RAUL HERNANDEZ G.' }, [leg(2, 100, 1000)]),
      trip({}, [leg(5, 200, 3000), leg(6, 50, 500)]),
      trip({ vehicle: 'VEH-2', plate: 'XB5678C', client: 'LOG990101AA1', driver: 'PERA820505EF5', driverName: 'ANA PEREZ RUIZ' }, [
        leg(5, 300, 4000),
        leg(null, 80, 900),
      ]),
    ],
    [],
  );
  t.same(
    days.map((d) => d.day),
    ['2026-03-02', '2026-03-05', '2026-03-06'],
    'a day per delivery day',
  );
  const g = periodGroups(periodUnits(days, '2026-03-01', '2026-03-31'), {});
  t.same(g.byDriver, [
    { driver: 'HEGR751212AB3', name: 'RAUL HERNANDEZ GARCIA', trips: 2, legs: 3, km: 350, revenueC: 450_000, loaded: 3000, offloaded: 2970, tollC: 0 },
    { driver: 'PERA820505EF5', name: 'ANA PEREZ RUIZ', trips: 1, legs: 1, km: 300, revenueC: 400_000, loaded: 1000, offloaded: 990, tollC: 0 },
  ]);
  t.same(
    g.byVehicle.map((v) => [v.vehicle, v.plate, v.trips, v.km]),
    [
      ['VEH-1', 'XA1234B', 2, 350],
      ['VEH-2', 'XB5678C', 1, 300],
    ],
  );
  t.same(g.total, { trips: 3, legs: 4, km: 650, revenueC: 850_000, loaded: 4000, offloaded: 3960, tollC: 0 });

  const march6 = periodGroups(periodUnits(days, '2026-03-06', '2026-03-31'), {});
  t.same(
    march6.total,
    { trips: 1, legs: 1, km: 50, revenueC: 50_000, loaded: 1000, offloaded: 990, tollC: 0 },
    'a period holding only its second day counts it once',
  );
  const both = periodGroups(periodUnits(days, '2026-03-05', '2026-03-06'), {});
  t.same(
    both.byVehicle.map((v) => [v.vehicle, v.trips, v.legs, v.km]),
    [
      ['VEH-1', 1, 2, 250],
      ['VEH-2', 1, 1, 300],
    ],
    'a period ending on the second of two days counts the trip once',
  );
  const vehicle2 = periodGroups(periodUnits(days, '2026-03-01', '2026-03-31'), { client: 'LOG990101AA1' });
  t.same(
    vehicle2.byDriver.map((d) => [d.name, d.trips, d.km]),
    [['ANA PEREZ RUIZ', 1, 300]],
    'a client filter keeps only its combinations',
  );
});
