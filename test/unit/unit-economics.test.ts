import t from 'tap';
import { legUnitInputs, sumUnitInputs, unitEconomics, unitEconomicsBy } from '../../lib/analytics/unit-economics.ts';
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
  t.same(legUnitInputs(trip.shipments[0]!), { revenue: 10_000, km: 250, loadedLitres: 20_000, offloadedLitres: 19_960 });
});

t.test('grouping sums in cents', async (t) => {
  t.same(sumUnitInputs([{ revenue: 0.1, km: 0.1, loadedLitres: 1, offloadedLitres: 1 }, { revenue: 0.2, km: 0.2, loadedLitres: 2, offloadedLitres: 1.5 }]),
    { revenue: 0.3, km: 0.3, loadedLitres: 3, offloadedLitres: 2.5 });
  const rows = unitEconomicsBy([
    { key: 'VER→PUE', ...inputs },
    { key: 'VER→PUE', revenue: 5000, km: 100, loadedLitres: 10_000, offloadedLitres: 10_000 },
    { key: 'TAB→VER', revenue: 3000, km: 0, loadedLitres: 0, offloadedLitres: 0 },
  ]);
  t.same(rows.map((r) => [r.key, r.rows, r.revenue, r.revenuePerKm.value, r.revenuePerLitre.value]), [
    ['TAB→VER', 1, 3000, null, null],
    ['VER→PUE', 2, 15_000, 30, 0.5], // 15,000 / 500 km; 15,000 / 30,000 L
  ]);
});
