/**
 * The calendar the trip-based differential tests write on (test/*-rollups-differential.test.ts):
 * day 0 is 2026-08-01 in Mexico City (UTC−6, no daylight saving), and everything they write
 * falls on days 0..100, all before today.
 */
export const HOUR = 3_600_000;
export const DAY = 86_400_000;
export const BASE = Date.parse('2026-08-01T00:00:00-06:00');
/** An instant as a CFDI's wall time in Mexico City. */
export const wallOf = (ms: number): string => new Date(ms - 6 * HOUR).toISOString().slice(0, 19);
/** Day `n` after day 0 (negative: before), as a report's date parameter. */
export const dayOf = (n: number): string => wallOf(BASE + n * DAY).slice(0, 10);
/** Cents as a CFDI amount. */
export const money = (c: number): string => (c / 100).toFixed(2);
