/**
 * Business days of the SAT (CFF art. 12: Saturdays, Sundays and the listed holidays are not
 * business days), in Mexico City. Used for the receiver's 3 business days to answer a
 * cancellation request, after which silence is tacit acceptance (CFF art. 29-A; SAT's
 * "Plazo vencido"). The SAT's general vacation periods, which the same article also excludes,
 * are set each year by decree and are not in this table.
 */
import { isoWeekday, mxAddDays, mxDateString, mxDayStart } from './mexico-city.ts';

/** 'YYYY-MM-DD' of the n-th (1-based) given ISO weekday of a month. */
function nthWeekday(year: number, month: number, weekday: number, n: number): string {
  const first = `${year}-${String(month).padStart(2, '0')}-01`;
  const offset = (weekday - isoWeekday(first) + 7) % 7;
  return mxAddDays(first, offset + 7 * (n - 1));
}

const holidaysCache = new Map<number, Set<string>>();

/** CFF art. 12 holidays of a year: 1 Jan, first Monday of Feb, third Monday of Mar, 1 and 5 May, 16 Sep, third Monday of Nov, 25 Dec, and the presidential transfer day (1 Oct every six years from 2024; 1 Dec before). */
export function cffHolidays(year: number): Set<string> {
  let set = holidaysCache.get(year);
  if (set) return set;
  set = new Set([
    `${year}-01-01`,
    nthWeekday(year, 2, 1, 1),
    nthWeekday(year, 3, 1, 3),
    `${year}-05-01`,
    // Not a day of rest under the labour law (LFT art. 74), but one the tax code does not count.
    `${year}-05-05`,
    `${year}-09-16`,
    nthWeekday(year, 11, 1, 3),
    `${year}-12-25`,
  ]);
  if (year >= 2024 && (year - 2024) % 6 === 0) set.add(`${year}-10-01`);
  else if (year < 2024 && (year - 2018) % 6 === 0) set.add(`${year}-12-01`);
  holidaysCache.set(year, set);
  return set;
}

export function isBusinessDay(date: string): boolean {
  return isoWeekday(date) <= 5 && !cffHolidays(Number(date.slice(0, 4))).has(date);
}

/**
 * The instant a period of `days` business days counted from `fromMs` ends: midnight (Mexico
 * City) after the `days`-th business day following the day of `fromMs`.
 */
export function businessDaysDeadline(fromMs: number, days: number): number {
  let date = mxDateString(fromMs);
  for (let left = days; left > 0;) {
    date = mxAddDays(date, 1);
    if (isBusinessDay(date)) left -= 1;
  }
  return mxDayStart(mxAddDays(date, 1));
}

/** The day itself when it is a business day, else the next one: a deadline falling on a day off moves to it (CFF art. 12). */
export function onBusinessDay(date: string): string {
  let day = date;
  while (!isBusinessDay(day)) day = mxAddDays(day, 1);
  return day;
}

/** Business days the receiver has to accept or reject a cancellation request (CFF art. 29-A). */
export const RECEIVER_ANSWER_BUSINESS_DAYS = 3;

/** When the receiver's silence becomes tacit acceptance of a request made at `requestedAt`. */
export const receiverDeadline = (requestedAt: number): number => businessDaysDeadline(requestedAt, RECEIVER_ANSWER_BUSINESS_DAYS);
