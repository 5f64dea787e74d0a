/**
 * The instant balances are judged at, from an `asOf` day: the end of that Mexico City day, or now
 * when that end is still to come (today, or a later day: what will be owed then is not known yet,
 * so the balances of now are the answer; the report names the day asked for beside the one used).
 */
import { mxDayEnd } from '../time/mexico-city.ts';

export function asOfInstant(now: Date, asOf: string | undefined, fallback: number = now.getTime()): number {
  if (asOf === undefined) return fallback;
  return Math.min(now.getTime(), mxDayEnd(asOf));
}
