import t from 'tap';
import { isDelivered } from '../../lib/trips/delivery-state.ts';
import {
  byRevenue,
  EMPTY_UNIT_GROUP,
  legUnitInputs,
  meanLegKm,
  sumUnitInputs,
  unitEconomics,
  unitEconomicsBy,
  unitRow,
} from '../../lib/analytics/unit-economics.ts';
import { diesel, leg, makeTrip } from '../fixtures/documents.ts';

const inputs = { revenue: 10_000, km: 400, loadedLitres: 20_000, offloadedLitres: 19_960 };

t.test('revenue per km and per litre, basis stated', async (t) => {
  const loaded = unitEconomics(inputs);
  t.same(loaded, { revenue: 10_000, km: 400, litres: 20_000, litresBasis: 'loaded', revenuePerKm: { value: 25 }, revenuePerLitre: { value: 0.5 } });
  // 10,000 / 19,960 = 0.50100…
  t.same(unitEconomics(inputs, 'offloaded').revenuePerLitre, { value: 0.501 });
  t.equal(unitEconomics(inputs, 'offloaded').litresBasis, 'offloaded');
});

t.test('division by zero → null with a reason, never NaN', async (t) => {
  const noKm = unitEconomics({ ...inputs, km: 0 });
  t.same(noKm.revenuePerKm, { value: null, reason: 'no km (division by zero)' });
  const noLitres = unitEconomics({ ...inputs, loadedLitres: 0 });
  t.same(noLitres.revenuePerLitre, { value: null, reason: 'no loaded litres (division by zero)' });
  const nothing = unitEconomics({ revenue: 0, km: 0, loadedLitres: 0, offloadedLitres: 0 }, 'offloaded');
  t.same(nothing.revenuePerKm, { value: null, reason: 'no km (division by zero)' });
  t.same(nothing.revenuePerLitre, { value: null, reason: 'no offloaded litres (division by zero)' });
  t.same(unitEconomics({ revenue: 0, km: 100, loadedLitres: 1000, offloadedLitres: 1000 }).revenuePerKm, { value: 0 }, 'no revenue is a real 0');
  t.notOk(JSON.stringify(nothing).includes('NaN'));
});

t.test('leg inputs use billed freight (tolls excluded)', async (t) => {
  const trip = makeTrip({ legs: [leg({ distanceKm: 250, products: [diesel(20_000, 19_960)], pricing: { billedFreight: 10_000, toll: 800 } })] });
  const first = trip.shipments[0]!;
  if (!isDelivered(first)) throw new Error('a delivered leg');
  t.same(legUnitInputs(first), { revenue: 10_000, km: 250, loadedLitres: 20_000, offloadedLitres: 19_960 });
});

t.test('grouping sums in cents', async (t) => {
  t.same(
    sumUnitInputs([
      { revenue: 0.1, km: 0.1, loadedLitres: 1, offloadedLitres: 1 },
      { revenue: 0.2, km: 0.2, loadedLitres: 2, offloadedLitres: 1.5 },
    ]),
    { revenue: 0.3, km: 0.3, loadedLitres: 3, offloadedLitres: 2.5 },
  );
  const rows = unitEconomicsBy([
    { key: 'VER→PUE', ...inputs },
    { key: 'VER→PUE', revenue: 5000, km: 100, loadedLitres: 10_000, offloadedLitres: 10_000 },
    { key: 'TAB→VER', revenue: 3000, km: 0, loadedLitres: 0, offloadedLitres: 0 },
  ]);
  t.same(
    rows.map((r) => [r.key, r.rows, r.revenue, r.revenuePerKm.value, r.revenuePerLitre.value]),
    [
      ['TAB→VER', 1, 3000, null, null],
      ['VER→PUE', 2, 15_000, 30, 0.5], // 15,000 / 500 km; 15,000 / 30,000 L
    ],
  );
});

t.test('report rows from group sums', async (t) => {
  // 2 trips, 3 legs: 12,345.67 MXN over 617.2834 km and 20,000.0004 / 19,950 litres.
  const g = { trips: 2, legs: 3, km: 617.2834, revenueC: 1_234_567, loaded: 20_000.0004, offloaded: 19_950, tollC: 0 };
  t.same(unitRow(g, 'loaded'), {
    trips: 2,
    legs: 3,
    revenue: 12_345.67,
    km: 617.283,
    litres: 20_000,
    loadedLitres: 20_000,
    offloadedLitres: 19_950,
    revenuePerKm: { value: 20 }, // 12,345.67 / 617.283 = 20.00003
    revenuePerLitre: { value: 0.6173 },
  });
  t.equal(unitRow(g, 'offloaded').revenuePerLitre.value, 0.6188, '12,345.67 / 19,950');
  t.same(unitRow(EMPTY_UNIT_GROUP, 'loaded').revenuePerKm, { value: null, reason: 'no km (division by zero)' });
  t.equal(meanLegKm({ km: 617.2834, legs: 3 }), 205.8);
  t.equal(meanLegKm({ km: 0, legs: 0 }), 0);
  const rows = [
    { k: 'b', revenue: 5 },
    { k: 'a', revenue: 5 },
    { k: 'c', revenue: 9 },
  ];
  t.same(
    rows.sort(byRevenue((x) => x.k)).map((x) => x.k),
    ['c', 'a', 'b'],
  );
});
