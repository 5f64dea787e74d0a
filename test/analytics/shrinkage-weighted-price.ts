/**
 * A leg of several products is valued at their loaded-weighted price (docs/domain.md, "Discounts, demurrage and
 * shrinkage recovery"), the exact one: default settings (tolerance 0, mode excess; diesel 24.50, gasoline 23.90 MXN/L).
 * Loaded 10,000 L of diesel and 3,000 L of gasoline: (245,000 + 71,700) / 13,000 = 24.361538… per litre; 2,000 L of
 * diesel short: 2,000 × 316,700 / 13,000 = 48,723.0769… → 48,723.08 (at the price rounded to 24.3615 first: 48,723.00).
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { makeTrip, leg, diesel, gasoline, CLIENT_COMPANY } from '../fixtures/documents.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';
import { discountsShrinkageRollups } from '../../lib/analytics/discounts-shrinkage-rollup-kind.ts';

export default async function shrinkageWeightedPriceTests(t: Test): Promise<void> {
  const h = await startHarness(t, { build: { now: () => new Date('2026-05-20T12:00:00-06:00') } });
  await insertTrips(h.db, [
    makeTrip({
      tenant: TENANT_A,
      client: CLIENT_COMPANY,
      legs: [leg({ loadDate: '2026-03-05T06:00', unloadDate: '2026-03-05T16:00', products: [diesel(10_000, 8_000), gasoline(3_000, 3_000)] })],
    }),
  ]);
  const ROUTE = '/api/analytics/discounts-and-shrinkage';
  const check = async (t: Test, how: string): Promise<void> => {
    const res = await h.app.inject({ method: 'GET', url: `${ROUTE}?startDate=2026-03-01&endDate=2026-03-31`, headers: { 'x-api-key': KEY_A } });
    t.equal(res.statusCode, 200, res.body.slice(0, 300));
    assertConforms(t, res, 'GET', ROUTE);
    const { shrinkage } = res.json();
    t.match(shrinkage.totals, { recoverableLitres: 2_000, recoverableValue: 48_723.08 }, `${how}: totals`);
    t.match(shrinkage.worstLegs.data, [{ recoverableValue: 48_723.08 }], `${how}: the leg`);
  };
  t.test('from the documents', (t) => check(t, 'documents'));
  t.test('from the kept totals', async (t) => {
    await discountsShrinkageRollups.rebuild(h.db);
    t.ok(await discountsShrinkageRollups.ready(h.db), 'built');
    await check(t, 'kept totals');
  });
}
