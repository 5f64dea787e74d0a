/**
 * Dispatch-to-bill's kept days as a kind of kept totals (lib/rollups/marked-rollup-kind.ts over
 * the trip source), with the document marks an older version left in front of it: every pass
 * of the drain, verify and a report first turn such marks into marks of the linked trips' days
 * (refresh-dispatch-to-bill-rollups.ts), then settle the days.
 */
import type { Db } from 'mongodb';
import { trips } from '../db/collections.ts';
import { markedRollupKind } from '../rollups/marked-rollup-kind.ts';
import type { RollupKind } from '../rollups/rollup-kind.ts';
import { DISPATCH_TO_BILL_TRIPS_SOURCE } from '../trips/trip-days.ts';
import { tenantsWithTrips } from '../trips/trips-repo.ts';
import { DISPATCH_TO_BILL_ROLLUP_VERSION } from './dispatch-to-bill-day.ts';
import { deleteDispatchToBillOf, keptDispatchToBillDays } from './dispatch-to-bill-rollups-repo.ts';
import { tripHistoryDays } from './trip-history-days.ts';
import {
  differingDispatchToBillDays,
  drainDocumentMarks,
  outstandingDocumentMarks,
  recomputeDispatchToBillRun,
  settleDocumentMarksOf,
} from './refresh-dispatch-to-bill-rollups.ts';

const days = markedRollupKind({
  name: 'dispatch-to-bill',
  stateName: 'dispatchToBillRollups',
  version: DISPATCH_TO_BILL_ROLLUP_VERSION,
  sources: [DISPATCH_TO_BILL_TRIPS_SOURCE],
  grain: 'day',
  // A report reads at most 366 days.
  marksPerPass: 400,
  // A run's days are computed and written alone (rollUpDispatchToBillDays keeps the run's days only, each from the
  // trips with a leg unloaded on it; the unbilled entries rewritten are those of the run's days): one read per rebuild run.
  rebuildAcrossGaps: true,
  tenants: tenantsWithTrips,
  isEmpty: async (db) => !(await trips(db).findOne({}, { projection: { _id: 1 } })),
  documentDays: async (db, tenant) => new Map([[DISPATCH_TO_BILL_TRIPS_SOURCE, (await tripHistoryDays(db, tenant)).unloaded]]),
  keptUnits: keptDispatchToBillDays,
  deleteOf: deleteDispatchToBillOf,
  recompute: (db, tenant, run, _ctx, maxTimeMS) => recomputeDispatchToBillRun(db, tenant, run, maxTimeMS),
  differing: (db, tenant, run, _ctx, maxTimeMS) => differingDispatchToBillDays(db, tenant, run, maxTimeMS),
});

export const dispatchToBillRollups: RollupKind = {
  ...days,
  drain: async (db, limit, maxTimeMS, window) => {
    const documents = await drainDocumentMarks(db, limit, maxTimeMS, window);
    return documents + (await days.drain(db, limit, maxTimeMS, window));
  },
  verify: async (db, tenant, opts = {}) => {
    await settleDocumentMarksOf(db, tenant, Infinity, 600_000);
    return days.verify(db, tenant, opts);
  },
  outstanding: async (db) => (await outstandingDocumentMarks(db)) + (await days.outstanding(db)),
};

/** Passes a report makes over pending marks (writes racing it leave marks the drain settles). */
const REPORT_PASSES = 4;

/** Before a report reads the days [fromDay, toDay]: the tenant's older invoice marks (if any), then the days marked in the period. */
export async function settleDispatchToBill(db: Db, tenant: string, fromDay: string, toDay: string, maxTimeMS: number): Promise<void> {
  await settleDocumentMarksOf(db, tenant, REPORT_PASSES * 2, maxTimeMS);
  await days.settle(db, tenant, { from: fromDay, to: toDay, maxPasses: REPORT_PASSES, maxTimeMS });
}
