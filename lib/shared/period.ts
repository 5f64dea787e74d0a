/**
 * Reporting periods of the tax summary and the analytic audits: whole
 * America/Mexico_City calendar days, both ends inclusive, resolved against the
 * service clock (ctx.now()) so a response can always state the exact window
 * it covered and whether it was defaulted.
 */
import { invalidQuery } from '../http/api-error.ts';
import { daysInRange, isMonthKey, mxAddDays, mxDateString, mxDayEnd, mxDayStart, mxMonthKey, mxMonthRange, MX_TZ } from '../time/mexico-city.ts';

/** Default window of the audits: the last 90 days ending today. */
export const DEFAULT_PERIOD_DAYS = 90;
/** Longest window any report accepts (a leap year plus a day of slack for "same day last year"). */
export const MAX_PERIOD_DAYS = 366;

export interface Period {
  /** 'YYYY-MM-DD', inclusive. An `endDate` before `startDate` is an empty period (0 days). */
  startDate: string;
  endDate: string;
  days: number;
  /** The endDate asked for when the range was longer than maxDays and was cut to its first maxDays days; else null. */
  requestedEndDate: string | null;
  timeZone: typeof MX_TZ;
  /** First and last instant (epoch ms, inclusive). */
  start: number;
  end: number;
}

export interface AnalyticsPeriod extends Period {
  /** True when startDate and/or endDate were filled in by the default rule. */
  defaulted: boolean;
  maxDays: number;
  /** min(now, end): the instant balances and idleness are judged at. */
  asOf: number;
}

/**
 * Whole days from startDate to endDate, as a report covers them. Semantics a client's own
 * tools can rely on without knowing cross-field rules (and so no 400): an inverted range is
 * an empty period, and a range longer than maxDays covers its first maxDays days, saying so.
 */
function span(
  startDate: string,
  endDate: string,
  maxDays: number,
): { endDate: string; days: number; requestedEndDate: string | null; start: number; end: number } {
  const start = mxDayStart(startDate);
  if (endDate < startDate) return { endDate, days: 0, requestedEndDate: null, start, end: start - 1 };
  const days = daysInRange(startDate, endDate);
  if (days <= maxDays) return { endDate, days, requestedEndDate: null, start, end: mxDayEnd(endDate) };
  const cut = mxAddDays(startDate, maxDays - 1);
  return { endDate: cut, days: maxDays, requestedEndDate: endDate, start, end: mxDayEnd(cut) };
}

/**
 * startDate/endDate → a period. Both missing: the `defaultDays` days ending
 * today (Mexico City). Only endDate: the `defaultDays` days ending then. Only
 * startDate: from it to today, or `defaultDays` days when it lies in the future.
 * An inverted range is empty; a span above maxDays is cut (see span()).
 */
export function resolvePeriod(
  now: Date,
  startDate: string | undefined,
  endDate: string | undefined,
  opts: { defaultDays?: number; maxDays?: number } = {},
): AnalyticsPeriod {
  const defaultDays = opts.defaultDays ?? DEFAULT_PERIOD_DAYS;
  const maxDays = opts.maxDays ?? MAX_PERIOD_DAYS;
  const today = mxDateString(now.getTime());
  let s = startDate;
  let e = endDate;
  if (s === undefined && e === undefined) {
    e = today;
    s = mxAddDays(today, 1 - defaultDays);
  } else if (s === undefined) {
    s = mxAddDays(e as string, 1 - defaultDays);
  } else if (e === undefined) {
    e = s <= today ? today : mxAddDays(s, defaultDays - 1);
  }
  const sd = s;
  const { endDate: ed, days, requestedEndDate, start, end } = span(sd, e as string, maxDays);
  return {
    startDate: sd,
    endDate: ed,
    days,
    requestedEndDate,
    timeZone: MX_TZ,
    start,
    end,
    defaulted: startDate === undefined || endDate === undefined,
    maxDays,
    // An inverted range is empty, yet still ends on its endDate: balances are judged then.
    asOf: Math.min(now.getTime(), days === 0 ? mxDayEnd(e as string) : end),
  };
}

export interface TaxPeriod extends Period {
  /** The month asked for, or null for a date range. */
  targetMonth: string | null;
  source: 'targetMonth' | 'range' | 'default';
}

/**
 * Tax summary window: `targetMonth` (YYYY-MM), or startDate/endDate, or by
 * default the current Mexico City month up to its last day. targetMonth with
 * startDate and/or endDate is their intersection (possibly empty).
 */
export function resolveTaxPeriod(
  now: Date,
  targetMonth: string | undefined,
  startDate: string | undefined,
  endDate: string | undefined,
  maxDays = MAX_PERIOD_DAYS,
): TaxPeriod {
  if (targetMonth !== undefined || (startDate === undefined && endDate === undefined)) {
    const month = targetMonth ?? mxMonthKey(now.getTime());
    if (!isMonthKey(month)) throw invalidQuery('targetMonth', 'targetMonth must be a month YYYY-MM (01..12)');
    const r = mxMonthRange(month);
    const first = mxDateString(r.start);
    const last = mxDateString(r.endExclusive - 1);
    const sd = startDate !== undefined && startDate > first ? startDate : first;
    const ed = endDate !== undefined && endDate < last ? endDate : last;
    const p = span(sd, ed, maxDays);
    return {
      startDate: sd,
      endDate: p.endDate,
      days: p.days,
      requestedEndDate: null,
      timeZone: MX_TZ,
      start: p.start,
      end: p.end,
      targetMonth: month,
      source: targetMonth ? 'targetMonth' : 'default',
    };
  }
  const p = resolvePeriod(now, startDate, endDate, { defaultDays: 31, maxDays });
  return {
    startDate: p.startDate,
    endDate: p.endDate,
    days: p.days,
    requestedEndDate: p.requestedEndDate,
    timeZone: MX_TZ,
    start: p.start,
    end: p.end,
    targetMonth: null,
    source: 'range',
  };
}

/** The Mexico City months ('YYYY-MM') a period touches, each clipped to the period as [start, endExclusive). */
export function monthsOf(period: Pick<Period, 'start' | 'end'>): { month: string; start: number; endExclusive: number }[] {
  const out: { month: string; start: number; endExclusive: number }[] = [];
  if (period.end < period.start) return out; // an empty period touches no month
  let month = mxMonthKey(period.start);
  for (;;) {
    const r = mxMonthRange(month);
    if (r.start > period.end) break;
    out.push({ month, start: Math.max(r.start, period.start), endExclusive: Math.min(r.endExclusive, period.end + 1) });
    month = mxMonthKey(r.endExclusive);
  }
  return out;
}

/** ISO 8601 of an epoch ms, for response fields. */
export const iso = (ms: number): string => new Date(ms).toISOString();
