/**
 * Dispatch-to-bill from the days kept on write (docs/rollups.md "Dispatch-to-bill"): the period's
 * days settled, then added (dispatch-to-bill-day.ts), and the first `limit` unbilled trips read
 * from their index: the same result as folding every trip of the period.
 */
import type { Db } from 'mongodb';
import type { Period } from '../shared/period.ts';
import type { DispatchToBillResult } from './dispatch-to-bill.ts';
import { foldDispatchToBillDays, unbilledTrip } from './dispatch-to-bill-day.ts';
import { readDispatchToBillDays, readUnbilledPage } from './dispatch-to-bill-rollups-repo.ts';
import { settleDispatchToBill } from './dispatch-to-bill-rollup-kind.ts';

export async function keptDispatchToBill(
  db: Db,
  tenant: string,
  period: Period,
  scope: { client?: string },
  limit: number,
  now: number,
  maxTimeMS: number,
): Promise<DispatchToBillResult> {
  await settleDispatchToBill(db, tenant, period.startDate, period.endDate, maxTimeMS);
  const parts = period.days > 0 ? await readDispatchToBillDays(db, tenant, period.startDate, period.endDate, maxTimeMS) : [];
  const f = foldDispatchToBillDays(parts, period.startDate, scope.client);
  const page = f.unbilledTotal > 0 ? await readUnbilledPage(db, tenant, { start: period.start, end: period.end, ...scope }, limit, maxTimeMS) : [];
  const preBilled = f.preBilled.slice(0, limit);
  return {
    summary: f.summary,
    byClient: f.byClient,
    unbilled: { total: f.unbilledTotal, listed: page.length, limit, data: page.map((e) => unbilledTrip(e, now)) },
    preBilled: { total: f.preBilled.length, listed: preBilled.length, limit, data: preBilled },
    noLink: f.noLink,
    cancelledLink: f.cancelledLink,
    unresolved: f.unresolved,
  };
}
