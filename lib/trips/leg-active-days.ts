/**
 * The calendar days a leg kept its unit busy (docs/domain.md "Fleet utilization and
 * productivity"): every Mexico City day from the loading day to the offloading day (at most
 * MAX_LEG_SPAN_DAYS days in all, against mistyped dates), or the leg's compact date when the
 * instants are missing. Fleet utilization counts them, and a trip write marks them
 * (lib/trips/trip-days.ts) so the totals kept of those days are recomputed.
 */
import type { TripLeg } from '../model/trip-document.ts';
import { daysBetweenDates, mxAddDays, mxDateString, mxDayEnd, ymdIntToDateString } from '../time/mexico-city.ts';

/**
 * Most days credited to one leg, its loading day the first: guards against a mistyped unloadDate turning one leg into
 * a year of activity. The queries that find a period's legs look this many days back (a superset).
 */
export const MAX_LEG_SPAN_DAYS = 31;

/** 'YYYY-MM-DD' of a compact date, or null when it is no calendar date. */
export function safeYmd(ymd: number): string | null {
  try {
    return ymdIntToDateString(ymd);
  } catch {
    return null;
  }
}

/** Calendar days a leg kept its unit busy ('YYYY-MM-DD', ascending, distinct). */
export function legActiveDays(leg: Pick<TripLeg, 'date' | 'loadDate' | 'unloadDate'>): string[] {
  const days = new Set<string>();
  const legDay = safeYmd(leg.date);
  if (leg.loadDate !== null && leg.unloadDate !== null && leg.unloadDate >= leg.loadDate) {
    const from = mxDateString(leg.loadDate);
    const span = Math.min(daysBetweenDates(from, mxDateString(leg.unloadDate)), MAX_LEG_SPAN_DAYS - 1);
    for (let i = 0; i <= span; i += 1) days.add(mxAddDays(from, i));
  } else {
    if (leg.loadDate !== null) days.add(mxDateString(leg.loadDate));
    if (leg.unloadDate !== null) days.add(mxDateString(leg.unloadDate));
    if (days.size === 0 && legDay !== null) days.add(legDay);
  }
  return [...days].sort();
}

/**
 * A leg's unloading instant as its activity ends (the idle check's latest activity): the stored one, unless it lies
 * after the last of the MAX_LEG_SPAN_DAYS days credited from the loading day (a mistyped date), then the end of
 * that day. Without a loading instant, or unloaded before it, the stored one (legActiveDays counts both days then).
 */
export function creditedUnloadDate(loadDate: number | null, unloadDate: number | null): number | null {
  if (loadDate === null || unloadDate === null || unloadDate < loadDate) return unloadDate;
  const lastDay = mxAddDays(mxDateString(loadDate), MAX_LEG_SPAN_DAYS - 1);
  return mxDateString(unloadDate) > lastDay ? mxDayEnd(lastDay) : unloadDate;
}

/**
 * Elapsed time from loading to unloading at or under which creditedUnloadDate never moves the unloading instant
 * (MAX_LEG_SPAN_DAYS − 2 days: at most MAX_LEG_SPAN_DAYS − 1 calendar days apart, whatever the offsets): a query
 * sends only the legs longer than it to be capped.
 */
export const UNCAPPED_LEG_MS = (MAX_LEG_SPAN_DAYS - 2) * 86_400_000;
