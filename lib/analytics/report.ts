/**
 * Pieces every audit response carries so a number can be traced back: the
 * period as resolved, and small helpers for lists capped by `limit`.
 */
import type { components } from '../../generated/api.d.ts';
import type { AnalyticsPeriod } from '../shared/period.ts';
import { mxDateString } from '../time/mexico-city.ts';

/** The period as the spec states it (`AnalyticsPeriod`): a spec change the code does not follow fails type-checking. */
export type PeriodOut = components['schemas']['AnalyticsPeriod'];

export const periodOut = (p: AnalyticsPeriod): PeriodOut => ({
  startDate: p.startDate,
  endDate: p.endDate,
  days: p.days,
  requestedEndDate: p.requestedEndDate,
  timeZone: p.timeZone,
  defaulted: p.defaulted,
  maxDays: p.maxDays,
});

/** Instant (ISO 8601) balances and ages are judged at, and its Mexico City day (spec: `AsOf`). */
export type AsOfOut = components['schemas']['AsOf'];

export const asOfOut = (ms: number): AsOfOut => ({ instant: new Date(ms).toISOString(), date: mxDateString(ms) });

export interface Capped<T> {
  total: number;
  listed: number;
  limit: number;
  data: T[];
}

/** A fold over rows, one at a time (lib/analytics accumulators). */
export interface RowAccumulator<T, R> {
  add(row: T): void;
  result(): R;
}

/**
 * Feeds rows into an accumulator as they arrive (a driver cursor: one batch
 * at a time) and returns its result; the rows themselves are never collected.
 * Leaving early (an error) closes the cursor.
 */
export async function foldRows<T, R>(rows: AsyncIterable<T>, acc: RowAccumulator<T, R>): Promise<R> {
  for await (const row of rows) acc.add(row);
  return acc.result();
}

/** The first `limit` items of an already ordered list, with the counts. */
export function capped<T>(items: readonly T[], limit: number): Capped<T> {
  const data = items.slice(0, limit);
  return { total: items.length, listed: data.length, limit, data };
}

/**
 * The first `limit` items under `order` of everything added, and how many were
 * added, holding at most about 2 × limit items: when the buffer fills it is
 * sorted (stable: equal items keep their arrival order) and cut to `limit`.
 * Same items, same order as sorting the whole list then taking `limit`.
 * `limit` Infinity keeps everything.
 */
export class TopList<T> {
  private items: T[] = [];
  private count = 0;

  constructor(
    private readonly limit: number,
    private readonly order: (a: T, b: T) => number,
  ) {}

  add(item: T): void {
    this.count += 1;
    this.items.push(item);
    if (this.items.length >= Math.max(2 * this.limit, 64)) this.items = this.items.sort(this.order).slice(0, this.limit);
  }

  /** As `capped(wholeSortedList, limit)`. */
  capped(): Capped<T> {
    const data = [...this.items].sort(this.order).slice(0, this.limit);
    return { total: this.count, listed: data.length, limit: this.limit, data };
  }
}

export const byString =
  <T>(key: (x: T) => string) =>
  (a: T, b: T): number => {
    const ka = key(a);
    const kb = key(b);
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  };

/** HHI band thresholds' published source (the defaults of tenant settings). */
export const HHI_SOURCE =
  'U.S. Department of Justice & FTC, Horizontal Merger Guidelines (19 Aug 2010), §5.3: < 1,500 unconcentrated, 1,500–2,500 moderately concentrated, > 2,500 highly concentrated';
