/** Number formatting, rounding and time units shared by the demo modules (ids, descriptions, tariffs). */
import { MS_PER_DAY } from '../../lib/time/mexico-city.ts';

/** Time units in ms. */
export const MIN = 60_000;
export const HOUR = 3_600_000;
export const DAY = MS_PER_DAY;

/** Zero-padded decimal: pad(7, 3) = '007'. */
export const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** Whole number with thousands separators, as invoice descriptions print litres: 31,500. */
export const fmtInt = (n: number): string => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

/** Rounded to 4 decimals (tariffs per litre, tolerance percents). */
export const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;
