/**
 * The Mexico City months a trip's legs were offloaded in, stored on the trip as `offloadMonths`
 * (the computed pattern, as the financial documents' derived fields): the list of a month's
 * shipments by offload date is then one equality on index `tenant_offload_month_created`, which
 * gives the list's order and its count from the entries, instead of a range over every leg's
 * offload date whose trips must be ranked and counted distinct (a month at 1M/1M: ~200,000 entries).
 * A trip is in a month's list exactly when the month is among its `offloadMonths`.
 */
import type { StoredTripDocument, TripDocument } from '../model/trip-document.ts';
import type { InstantRange } from '../shared/date-range.ts';
import { mxMonthKey, mxMonthRange } from '../time/mexico-city.ts';

/** The distinct months ('YYYY-MM', Mexico City) of the legs' offload instants, ascending; none for a trip with no leg offloaded. */
export function offloadMonthsOf(trip: Pick<TripDocument, 'shipments'>): string[] {
  const months = new Set<string>();
  for (const leg of trip.shipments ?? []) {
    if (typeof leg.unloadDate === 'number' && Number.isFinite(leg.unloadDate)) months.add(mxMonthKey(leg.unloadDate));
  }
  return [...months].sort();
}

/** The trip as written: its fields, then `offloadMonths` recomputed (a stored trip passed back in never keeps stale months). */
export function withOffloadMonths(trip: TripDocument): StoredTripDocument {
  return { ...trip, offloadMonths: offloadMonthsOf(trip) };
}

/** The month ('YYYY-MM') an instant range covers exactly — from its first to its last ms in Mexico City — else null. */
export function wholeMonthOf(range: InstantRange): string | null {
  if (range.from === undefined || range.to === undefined) return null;
  const month = mxMonthKey(range.from);
  const { start, endExclusive } = mxMonthRange(month);
  return range.from === start && range.to === endExclusive - 1 ? month : null;
}
