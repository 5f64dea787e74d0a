import t from 'tap';
import { parseDateTime } from '../../lib/time/date-time.ts';

// Expected instants worked out by hand from RFC 3339 (an offset is local time minus UTC).
t.test('the forms Date.parse reads, unchanged', async (t) => {
  t.equal(parseDateTime('2026-04-01T14:00:00Z'), Date.UTC(2026, 3, 1, 14));
  t.equal(parseDateTime('2026-04-01T14:00:00-06:00'), Date.UTC(2026, 3, 1, 20));
  t.equal(parseDateTime('2026-04-01t14:00:00.250z'), Date.UTC(2026, 3, 1, 14, 0, 0, 250));
});

t.test('an offset of whole hours reads as that many hours', async (t) => {
  t.equal(parseDateTime('2026-04-01T14:00:00+05'), Date.UTC(2026, 3, 1, 9));
  t.equal(parseDateTime('2026-04-01T14:00:00.5-06'), Date.UTC(2026, 3, 1, 20, 0, 0, 500));
  t.equal(parseDateTime('2026-04-01T14:00:00+0530'), Date.UTC(2026, 3, 1, 8, 30));
});

t.test('a leap second is the last millisecond of its minute', async (t) => {
  t.equal(parseDateTime('2016-12-31T23:59:60Z'), Date.UTC(2016, 11, 31, 23, 59, 59, 999));
  t.equal(parseDateTime('2016-12-31T17:59:60.5-06:00'), Date.UTC(2016, 11, 31, 23, 59, 59, 999));
  t.equal(parseDateTime('2016-12-31T23:59:60+00'), Date.UTC(2016, 11, 31, 23, 59, 59, 999));
});

t.test('what is not a date-time does not read', async (t) => {
  for (const text of ['yesterday', '2026-13-01T00:00:00Z', '2026-04-01T14:00:00+5', '']) t.ok(Number.isNaN(parseDateTime(text)), JSON.stringify(text));
});
