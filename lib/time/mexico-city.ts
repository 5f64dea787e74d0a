/**
 * America/Mexico_City calendar helpers. CFDI and back-office dates carry no
 * offset and are read as Mexico City wall time; month boundaries (targetMonth)
 * and compact leg dates (YYYYMMDD) live in that zone too. Offsets come from
 * Intl (ICU tz data), not a fixed −06:00: the zone observed DST until Mexico
 * abolished it on 2022-10-30, and historical documents must still land on the
 * right day.
 */

export const MX_TZ = 'America/Mexico_City';
export const MS_PER_DAY = 86_400_000;

const partsFormatter = new Intl.DateTimeFormat('en-US', {
  timeZone: MX_TZ,
  hourCycle: 'h23',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
});

export interface WallTime {
  year: number;
  month: number; // 1..12
  day: number;
  hour: number;
  minute: number;
  second: number;
}

function intlWallTime(epochMs: number): WallTime {
  const out: WallTime = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const p of partsFormatter.formatToParts(new Date(epochMs))) {
    switch (p.type) {
      case 'year':
        out.year = Number(p.value);
        break;
      case 'month':
        out.month = Number(p.value);
        break;
      case 'day':
        out.day = Number(p.value);
        break;
      case 'hour':
        out.hour = Number(p.value);
        break;
      case 'minute':
        out.minute = Number(p.value);
        break;
      case 'second':
        out.second = Number(p.value);
        break;
      default:
        break;
    }
  }
  return out;
}

// Offsets only change on whole hours in this zone, so caching per UTC hour is
// exact and saves an Intl call per date in list post-processing.
const offsetCache = new Map<number, number>();

/**
 * Since DST was abolished (2022-10-30 02:00 local = 07:00Z) the offset is a
 * fixed −06:00; only earlier instants need the ICU tz data. The fast path
 * matters where every record is dated (the demo generator, list output).
 */
const MX_FIXED_SINCE = Date.UTC(2022, 9, 30, 7);
const MX_FIXED_OFFSET = -6 * 3_600_000;

/** Wall time minus UTC, in ms, at an instant (e.g. −6 h since late 2022). */
export function mxOffsetMs(epochMs: number): number {
  assertInstant(epochMs);
  if (epochMs >= MX_FIXED_SINCE) return MX_FIXED_OFFSET;
  const hourKey = Math.floor(epochMs / 3_600_000);
  const cached = offsetCache.get(hourKey);
  if (cached !== undefined) return cached;
  const w = intlWallTime(epochMs);
  const wholeSecond = epochMs - (((epochMs % 1000) + 1000) % 1000);
  const offset = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - wholeSecond;
  if (offsetCache.size > 50_000) offsetCache.clear();
  offsetCache.set(hourKey, offset);
  return offset;
}

/** Mexico City wall-clock fields of an instant. */
export function mxWallTime(epochMs: number): WallTime {
  const d = new Date(epochMs + mxOffsetMs(epochMs));
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth() + 1,
    day: d.getUTCDate(),
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
  };
}

/**
 * Instant of a Mexico City wall time. Two passes settle the offset around a
 * DST change; midnight always exists here (transitions were at 02:00).
 */
export function mxWallTimeToEpoch(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): number {
  const asUtc = Date.UTC(year, month - 1, day, hour, minute, second, ms);
  const firstGuess = asUtc - mxOffsetMs(asUtc);
  return asUtc - mxOffsetMs(firstGuess);
}

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const MONTH_RE = /^(\d{4})-(\d{2})$/;
const WALL_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?$/;
/** The same with an offset: `Z`, `±hh:mm` or `±hhmm`. */
const OFFSET_RE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(?:Z|([+-])(\d{2}):?(\d{2}))$/i;

interface Ymd {
  year: number;
  month: number;
  day: number;
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function checkYmd(year: number, month: number, day: number, input: string | number): Ymd {
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    throw new RangeError(`not a calendar date: ${input}`);
  }
  return { year, month, day };
}

function parseDate(date: string): Ymd {
  const m = DATE_RE.exec(date);
  if (!m) throw new RangeError(`expected YYYY-MM-DD, got: ${date}`);
  return checkYmd(Number(m[1]), Number(m[2]), Number(m[3]), date);
}

function assertInstant(epochMs: number): void {
  if (!Number.isFinite(epochMs)) throw new RangeError(`not a finite epoch ms: ${epochMs}`);
}

const pad2 = (n: number): string => String(n).padStart(2, '0');
const fmtYmd = (y: number, m: number, d: number): string => `${String(y).padStart(4, '0')}-${pad2(m)}-${pad2(d)}`;

/** True when `date` is a real YYYY-MM-DD calendar date. */
export function isMxDateString(date: string): boolean {
  try {
    parseDate(date);
    return true;
  } catch {
    return false;
  }
}

/** True when `month` is YYYY-MM with month 01..12. */
export function isMonthKey(month: string): boolean {
  const m = MONTH_RE.exec(month);
  return m !== null && Number(m[2]) >= 1 && Number(m[2]) <= 12;
}

/** First ms of a Mexico City calendar day: '2026-03-01' → 2026-03-01T06:00:00Z. */
export function mxDayStart(date: string): number {
  const { year, month, day } = parseDate(date);
  return mxWallTimeToEpoch(year, month, day);
}

/** First ms of the Mexico City day an instant falls on. */
export function mxDayStartAt(epochMs: number): number {
  return mxDayStart(mxDateString(epochMs));
}

/** Last ms of a Mexico City calendar day (inclusive end for range filters). */
export function mxDayEnd(date: string): number {
  return mxDayStart(mxAddDays(date, 1)) - 1;
}

/** A month 'YYYY-MM' as a half-open instant range [start, endExclusive). */
export function mxMonthRange(month: string): { start: number; endExclusive: number } {
  const m = MONTH_RE.exec(month);
  if (!m) throw new RangeError(`expected YYYY-MM, got: ${month}`);
  const year = Number(m[1]);
  const mon = Number(m[2]);
  checkYmd(year, mon, 1, month);
  const next = mon === 12 ? { y: year + 1, m: 1 } : { y: year, m: mon + 1 };
  return { start: mxWallTimeToEpoch(year, mon, 1), endExclusive: mxWallTimeToEpoch(next.y, next.m, 1) };
}

/** Compact Mexico City date of an instant: 20260301. */
export function mxYmdInt(epochMs: number): number {
  const w = mxWallTime(epochMs);
  return w.year * 10_000 + w.month * 100 + w.day;
}

/** 'YYYY-MM-DD' of a compact date int (validated). */
export function ymdIntToDateString(ymd: number): string {
  if (!Number.isInteger(ymd)) throw new RangeError(`not a YYYYMMDD integer: ${ymd}`);
  const { year, month, day } = checkYmd(Math.floor(ymd / 10_000), Math.floor(ymd / 100) % 100, ymd % 100, ymd);
  return fmtYmd(year, month, day);
}

/** First ms of the Mexico City day of a compact date: 20260301 → 2026-03-01T06:00:00Z. */
export function ymdIntToMxDayStart(ymd: number): number {
  return mxDayStart(ymdIntToDateString(ymd));
}

/** 'YYYY-MM' month key of an instant, in Mexico City. */
export function mxMonthKey(epochMs: number): string {
  const w = mxWallTime(epochMs);
  return `${String(w.year).padStart(4, '0')}-${pad2(w.month)}`;
}

/** 'YYYY-MM-DD' of an instant, in Mexico City. */
export function mxDateString(epochMs: number): string {
  const w = mxWallTime(epochMs);
  return fmtYmd(w.year, w.month, w.day);
}

/** Pure calendar arithmetic on 'YYYY-MM-DD' (no zone involved). */
export function mxAddDays(date: string, days: number): string {
  if (!Number.isInteger(days)) throw new RangeError(`days must be an integer: ${days}`);
  const { year, month, day } = parseDate(date);
  const d = new Date(Date.UTC(year, month - 1, day + days));
  return fmtYmd(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate());
}

/** Whole calendar days from date `a` to date `b` ('YYYY-MM-DD'); negative when b < a. */
export function daysBetweenDates(a: string, b: string): number {
  const pa = parseDate(a);
  const pb = parseDate(b);
  return Math.round((Date.UTC(pb.year, pb.month - 1, pb.day) - Date.UTC(pa.year, pa.month - 1, pa.day)) / MS_PER_DAY);
}

/** Whole Mexico City calendar days between two instants (b's day − a's day). */
export function mxCalendarDaysBetween(aMs: number, bMs: number): number {
  return daysBetweenDates(mxDateString(aMs), mxDateString(bMs));
}

/** Days in an inclusive date range ['from', 'to']; 0 when to < from. */
export function daysInRange(from: string, to: string): number {
  return Math.max(0, daysBetweenDates(from, to) + 1);
}

/** ISO weekday of a date, 1 = Monday … 7 = Sunday. */
export function isoWeekday(date: string): number {
  const { year, month, day } = parseDate(date);
  const wd = new Date(Date.UTC(year, month - 1, day)).getUTCDay();
  return wd === 0 ? 7 : wd;
}

/** Monday of the ISO week (Monday–Sunday) a date falls in. */
export function isoWeekMonday(date: string): string {
  return mxAddDays(date, 1 - isoWeekday(date));
}

/**
 * Parse a CFDI-style date-time. Without an offset ('2026-03-01T10:15:00') it is
 * Mexico City wall time, as the SAT writes them; with 'Z' or ±hh:mm the offset
 * is honoured. A bare 'YYYY-MM-DD' is the start of that Mexico City day.
 */
export function parseMxDateTime(text: string): number {
  const s = text.trim();
  if (DATE_RE.test(s)) return mxDayStart(s);
  const wall = WALL_RE.exec(s);
  const m = wall ?? OFFSET_RE.exec(s);
  if (!m) throw new RangeError(`not a date-time: ${text}`);
  // Every field checked: Date.parse rolls 2026-02-30 over to March 2 and 24:00 to the next day.
  const { year, month, day } = checkYmd(Number(m[1]), Number(m[2]), Number(m[3]), s);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const sec = m[6] === undefined ? 0 : Number(m[6]);
  const ms = m[7] === undefined ? 0 : Number(m[7].padEnd(3, '0'));
  if (hour > 23 || minute > 59 || sec > 59) throw new RangeError(`not a time of day: ${text}`);
  if (wall) return mxWallTimeToEpoch(year, month, day, hour, minute, sec, ms);
  const offsetHours = m[9] === undefined ? 0 : Number(m[9]);
  const offsetMinutes = m[10] === undefined ? 0 : Number(m[10]);
  if (offsetHours > 23 || offsetMinutes > 59) throw new RangeError(`not an offset: ${text}`);
  const offsetMs = (m[8] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  const utc = new Date(Date.UTC(2000, month - 1, day, hour, minute, sec, ms));
  utc.setUTCFullYear(year); // Date.UTC reads years 0–99 as 1900–1999
  return utc.getTime() - offsetMs;
}
