import { mxDayEnd, mxDayStart } from '../time/mexico-city.ts';

/** An inclusive instant range in epoch ms, from YYYY-MM-DD days in Mexico City. */
export interface InstantRange {
  from?: number;
  to?: number;
}

/**
 * Whole Mexico City days → instants, both ends inclusive. `endDate` before
 * `startDate` selects no day: the range is empty (from > to), so nothing matches.
 */
export function dayRange(startDate: string | undefined, endDate: string | undefined): InstantRange {
  return {
    ...(startDate ? { from: mxDayStart(startDate) } : {}),
    ...(endDate ? { to: mxDayEnd(endDate) } : {}),
  };
}
