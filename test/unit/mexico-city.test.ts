import t from 'tap';
import {
  daysBetweenDates,
  daysInRange,
  isMonthKey,
  isMxDateString,
  isoWeekday,
  isoWeekMonday,
  mxAddDays,
  mxCalendarDaysBetween,
  mxDateString,
  mxDayEnd,
  mxDayStart,
  mxDayStartAt,
  mxMonthKey,
  mxMonthRange,
  mxOffsetMs,
  mxYmdInt,
  parseMxDateTime,
  ymdIntToDateString,
  ymdIntToMxDayStart,
} from '../../lib/time/mexico-city.ts';

const utc = (s: string): number => Date.parse(s);

t.test('day boundaries: Mexico City is UTC−6 since 2022-10-30', async (t) => {
  t.equal(mxDayStart('2026-03-01'), utc('2026-03-01T06:00:00.000Z'), '2026-03-01T00:00 local = 06:00Z');
  t.equal(mxDayEnd('2026-03-01'), utc('2026-03-02T05:59:59.999Z'), 'inclusive end: last ms of the day');
  t.equal(mxDayEnd('2026-03-31'), utc('2026-04-01T05:59:59.999Z'));
  t.equal(mxOffsetMs(utc('2026-06-15T12:00:00Z')), -6 * 3_600_000, 'no summer time any more');
});

t.test('month ranges are half-open and local', async (t) => {
  t.same(mxMonthRange('2026-03'), { start: utc('2026-03-01T06:00:00Z'), endExclusive: utc('2026-04-01T06:00:00Z') });
  t.same(mxMonthRange('2026-12'), { start: utc('2026-12-01T06:00:00Z'), endExclusive: utc('2027-01-01T06:00:00Z') });
  t.same(mxMonthRange('2024-02'), { start: utc('2024-02-01T06:00:00Z'), endExclusive: utc('2024-03-01T06:00:00Z') });
  t.throws(() => mxMonthRange('2026-13'), RangeError);
  t.throws(() => mxMonthRange('2026-3'), RangeError);
});

t.test('instants near midnight fall on the Mexico City day', async (t) => {
  t.equal(mxYmdInt(utc('2026-03-01T05:59:59.999Z')), 20260228, 'still Feb 28 locally');
  t.equal(mxYmdInt(utc('2026-03-01T06:00:00.000Z')), 20260301);
  t.equal(mxMonthKey(utc('2026-04-01T05:30:00Z')), '2026-03', '23:30 local on Mar 31 is March');
  t.equal(mxMonthKey(utc('2026-04-01T06:00:00Z')), '2026-04');
  t.equal(mxDateString(utc('2026-01-01T05:00:00Z')), '2025-12-31');
  t.equal(ymdIntToMxDayStart(20260301), utc('2026-03-01T06:00:00Z'));
  t.equal(ymdIntToDateString(20260301), '2026-03-01');
  t.throws(() => ymdIntToMxDayStart(20260230), RangeError);
});

t.test('historical DST (before the 2022 abolition) comes from tz data', async (t) => {
  t.equal(mxDayStart('2022-07-01'), utc('2022-07-01T05:00:00Z'), 'CDT, UTC−5');
  t.equal(mxDayEnd('2022-04-03') - mxDayStart('2022-04-03') + 1, 23 * 3_600_000, 'spring forward: 23 h day');
  t.equal(mxDayEnd('2022-10-30') - mxDayStart('2022-10-30') + 1, 25 * 3_600_000, 'last fall back: 25 h day');
  t.equal(mxDayStart('2022-10-31'), utc('2022-10-31T06:00:00Z'));
  t.equal(mxMonthKey(utc('2022-08-01T04:30:00Z')), '2022-07', '23:30 CDT on Jul 31');
});

t.test('validation', async (t) => {
  t.throws(() => mxDayStart('2026-02-30'), RangeError);
  t.throws(() => mxDayStart('2026-3-1'), RangeError);
  t.throws(() => mxDateString(Number.NaN), RangeError);
  t.ok(isMxDateString('2024-02-29'));
  t.notOk(isMxDateString('2025-02-29'));
  t.ok(isMonthKey('2026-03'));
  t.notOk(isMonthKey('2026-00'));
});

t.test('calendar arithmetic', async (t) => {
  t.equal(mxAddDays('2026-02-28', 1), '2026-03-01');
  t.equal(mxAddDays('2026-03-01', -1), '2026-02-28');
  t.equal(mxAddDays('2025-12-31', 31), '2026-01-31');
  t.equal(daysBetweenDates('2026-03-01', '2026-03-31'), 30);
  t.equal(daysBetweenDates('2026-03-31', '2026-03-01'), -30);
  t.equal(daysInRange('2026-03-01', '2026-03-31'), 31);
  t.equal(daysInRange('2026-03-02', '2026-03-01'), 0);
  t.equal(mxCalendarDaysBetween(utc('2026-03-01T06:00:00Z'), utc('2026-03-02T05:59:59Z')), 0, 'same local day');
  t.equal(mxCalendarDaysBetween(utc('2026-03-02T05:59:59Z'), utc('2026-03-02T06:00:00Z')), 1, 'one second, next local day');
  t.equal(isoWeekday('2026-03-01'), 7, 'Sunday');
  t.equal(isoWeekday('2026-03-02'), 1, 'Monday');
  t.equal(isoWeekMonday('2026-03-01'), '2026-02-23', 'a Sunday belongs to the week of the Monday before');
  t.equal(isoWeekMonday('2026-03-02'), '2026-03-02', 'a Monday is its own');
  t.equal(isoWeekMonday('2026-01-01'), '2025-12-29', 'across a year');
  t.equal(mxDayStartAt(utc('2026-03-02T05:59:59.999Z')), utc('2026-03-01T06:00:00Z'), 'late evening local: that day');
  t.equal(mxDayStartAt(utc('2026-03-02T06:00:00Z')), utc('2026-03-02T06:00:00Z'), 'midnight local is its own start');
  t.equal(mxDayStartAt(utc('2022-07-01T12:00:00Z')), utc('2022-07-01T05:00:00Z'), 'DST era: UTC−5');
});

t.test('parseMxDateTime reads offset-less CFDI dates as Mexico City wall time', async (t) => {
  t.equal(parseMxDateTime('2026-03-01T10:15:00'), utc('2026-03-01T16:15:00Z'));
  t.equal(parseMxDateTime('2026-03-01T10:15'), utc('2026-03-01T16:15:00Z'));
  t.equal(parseMxDateTime('2026-03-01 10:15:30.5'), utc('2026-03-01T16:15:30.500Z'));
  t.equal(parseMxDateTime('2026-03-01'), utc('2026-03-01T06:00:00Z'));
  t.equal(parseMxDateTime('2026-03-01T10:15:00Z'), utc('2026-03-01T10:15:00Z'), 'explicit Z is honoured');
  t.equal(parseMxDateTime('2026-03-01T10:15:00-05:00'), utc('2026-03-01T15:15:00Z'));
  t.throws(() => parseMxDateTime('yesterday'), RangeError);
  t.throws(() => parseMxDateTime('2026-03-01T25:00'), RangeError);
  // With an offset the calendar is checked too (Date.parse rolled these over into the next days).
  t.equal(parseMxDateTime('2026-03-01T10:15:00.5+0530'), utc('2026-03-01T04:45:00.500Z'));
  t.equal(parseMxDateTime('2024-02-29 23:59:59z'), utc('2024-02-29T23:59:59Z'));
  for (const bad of [
    '2026-02-29T10:00Z',
    '2026-02-30T10:00:00+00:00',
    '2026-04-31 08:00-06:00',
    '2026-03-10 24:00Z',
    '2026-03-10T10:60Z',
    '2026-03-10T10:00+24:00',
  ])
    t.throws(() => parseMxDateTime(bad), RangeError, bad);
});
