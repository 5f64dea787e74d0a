import { badRequest } from '../http/api-error.ts';
import { mxDayEnd, mxDayStart } from '../time/mexico-city.ts';

/** An inclusive instant range in epoch ms, from YYYY-MM-DD days in Mexico City. */
export interface InstantRange { from?: number; to?: number }

/**
 * Whole Mexico City days → instants, both ends inclusive. `endDate` before
 * `startDate` is a client error, not an empty answer.
 */
export function dayRange(startDate: string | undefined, endDate: string | undefined, names: readonly [string, string] = ['startDate', 'endDate']): InstantRange {
  if (startDate && endDate && endDate < startDate) {
    throw badRequest('Invalid query parameter', [`${names[1]} must not be before ${names[0]}`]);
  }
  return {
    ...(startDate ? { from: mxDayStart(startDate) } : {}),
    ...(endDate ? { to: mxDayEnd(endDate) } : {}),
  };
}
