/**
 * A rebuild's runs across days without documents (docs/rollups.md, `rebuildAcrossGaps`): recomputing a
 * run of days that are not consecutive writes exactly those days. A day between them is never
 * computed by the run, so what is kept of it stays as it is (here a sentinel, and a day with a trip
 * the run must not touch), while stale forms of the run's own days are replaced or removed.
 */
import type { Test } from 'tap';
import { startHarness, TENANT_A } from '../helpers/harness.ts';
import { leg, makeTrip, CLIENT_COMPANY } from '../fixtures/documents.ts';
import { COLLECTIONS } from '../../lib/db/collections.ts';
import { mxDayStart } from '../../lib/time/mexico-city.ts';
import { recomputeDispatchToBillRun } from '../../lib/analytics/refresh-dispatch-to-bill-rollups.ts';
import { recomputeFleetDays } from '../../lib/analytics/refresh-fleet-rollups.ts';
import { decodeFleetDay, type StoredFleetDay } from '../../lib/analytics/fleet-day-rollup.ts';
import { writeDiscountDays } from '../../lib/analytics/discounts-shrinkage-rollups-repo.ts';
import type { KeptDiscountDay } from '../../lib/analytics/discount-days.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';

const T = TENANT_A;
const [D1, GAP, D3] = ['2026-04-02', '2026-04-05', '2026-04-09'];
const RUN = [D1, D3];
const NOON = (day: string): number => mxDayStart(day) + 12 * 3_600_000;

export default async function rollupRunsAcrossGapsTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  const coll = (name: string) => h.db.collection<{ _id: string } & Record<string, unknown>>(name);
  // One unbilled trip delivered on each day (loaded 08:00, unloaded 18:00 the same day): 20,000 L at 0.5 = 10,000 MXN.
  const [a, gap, c] = [D1, GAP, D3].map((day, i) =>
    makeTrip({ _id: `trip-gap-${i}`, tenant: T, client: CLIENT_COMPANY, idFinan: null, legs: [leg({ date: day })] }),
  );
  await insertTrips(h.db, [a!, gap!, c!]);

  t.test('dispatch-to-bill: a run of D1 and D3 rewrites those days only', async (t) => {
    const sentinelPart = { _id: `${T}|${GAP}|0`, tenant: T, day: GAP, part: 0, version: 1, groups: [{ c: 'SENTINEL' }] };
    const sentinelEntry = { _id: `${T}|sentinel`, tenant: T, day: GAP, offload: NOON(GAP), tripId: 'sentinel', client: 'SENTINEL', valueC: 1 };
    await coll(COLLECTIONS.dispatchToBillDays).insertMany([sentinelPart, { _id: `${T}|${D1}|1`, tenant: T, day: D1, part: 1, version: 1, groups: [] }]);
    await coll(COLLECTIONS.dispatchToBillUnbilled).insertMany([
      sentinelEntry,
      { _id: `${T}|stale`, tenant: T, day: D3, offload: NOON(D3), tripId: 'stale', client: 'STALE', valueC: 2 },
    ]);
    await recomputeDispatchToBillRun(h.db, T, RUN, 60_000);

    const parts = await coll(COLLECTIONS.dispatchToBillDays).find({ tenant: T }).sort({ _id: 1 }).toArray();
    t.same(
      parts.map((p) => p._id),
      [`${T}|${D1}|0`, `${T}|${GAP}|0`, `${T}|${D3}|0`],
      "the run's stale part 1 removed, the gap's part kept",
    );
    t.same(parts[1], sentinelPart, "the gap's part untouched");
    for (const p of [parts[0], parts[2]]) t.match(p, { groups: [{ c: CLIENT_COMPANY, u: 1, uC: 1_000_000, nl: 1, cl: 0 }] });

    const entries = await coll(COLLECTIONS.dispatchToBillUnbilled).find({ tenant: T }).sort({ _id: 1 }).toArray();
    t.same(
      entries.map((e) => e._id),
      [`${T}|sentinel`, `${T}|trip-gap-0`, `${T}|trip-gap-2`],
      "the run's trips listed, the run's stale entry removed, the gap's entry kept",
    );
    t.same(entries[0], sentinelEntry, "the gap's entry untouched");
  });

  t.test('fleet utilization: a run of D1 and D3 rewrites those days only', async (t) => {
    const sentinel = { _id: `${T}|${GAP}`, tenant: T, day: GAP, version: 1, sentinel: true };
    await coll(COLLECTIONS.fleetRollups).insertMany([sentinel, { _id: `${T}|${D3}`, tenant: T, day: D3, version: 1, stale: true }]);
    await recomputeFleetDays(h.db, T, RUN, 60_000);
    const days = await coll(COLLECTIONS.fleetRollups).find({ tenant: T }).sort({ _id: 1 }).toArray();
    t.same(
      days.map((d) => d._id),
      [`${T}|${D1}`, `${T}|${GAP}`, `${T}|${D3}`],
    );
    t.same(days[1], sentinel, "the gap's day untouched");
    for (const d of [days[0], days[2]]) {
      t.notOk('stale' in (d ?? {}), 'the stale form replaced');
      const kept = decodeFleetDay(d as unknown as StoredFleetDay);
      t.same([kept.units.length, kept.active], [1, [0]], 'one unit, active');
    }
  });

  t.test("discounts: a run's days written, a computed day outside the run not", async (t) => {
    const sentinel = { _id: `${T}|${GAP}`, tenant: T, day: GAP, docs: [], lines: [], sentinel: true };
    await coll(COLLECTIONS.discountDays).insertOne(sentinel);
    const day = (d: string): KeptDiscountDay => ({ _id: `${T}|${d}`, tenant: T, day: d, docs: [], lines: [] });
    await writeDiscountDays(h.db, T, RUN, [day(D1), day(GAP), day(D3)]);
    const days = await coll(COLLECTIONS.discountDays).find({ tenant: T }).sort({ _id: 1 }).toArray();
    t.same(days, [day(D1), sentinel, day(D3)]);
  });
}
