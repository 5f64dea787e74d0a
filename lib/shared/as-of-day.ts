/**
 * The instant a report's balances are judged at, from an `asOf` day: the end of that Mexico City
 * day, or now when the day is today. A day after today is refused: what will be owed then is a
 * forecast, not a balance (the cash inflow forecast answers that).
 */
import { invalidQuery } from '../http/api-error.ts';
import { mxDateString, mxDayEnd } from '../time/mexico-city.ts';

export function asOfInstant(now: Date, asOf: string | undefined, parameter = 'asOf', fallback: number = now.getTime()): number {
  if (asOf === undefined) return fallback;
  const today = mxDateString(now.getTime());
  if (asOf > today) throw invalidQuery(parameter, `${parameter} ${asOf} is after today (${today}, America/Mexico_City): balances are known up to now`);
  return Math.min(now.getTime(), mxDayEnd(asOf));
}
