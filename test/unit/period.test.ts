import t from 'tap';
import { monthsOf, resolvePeriod, resolveTaxPeriod } from '../../lib/shared/period.ts';
import { mxDayEnd, mxDayStart } from '../../lib/time/mexico-city.ts';

// 2026-04-20 03:00 UTC is still 2026-04-19 in Mexico City.
const NOW = new Date('2026-04-20T03:00:00Z');

t.test('default: the last 90 days ending today in Mexico City', async (t) => {
  const p = resolvePeriod(NOW, undefined, undefined);
  t.match(p, { startDate: '2026-01-20', endDate: '2026-04-19', days: 90, defaulted: true, maxDays: 366 });
  t.equal(p.start, mxDayStart('2026-01-20'));
  t.equal(p.end, mxDayEnd('2026-04-19'));
  t.equal(p.asOf, NOW.getTime(), 'asOf is now when the period ends today');
});

t.test('one end given', async (t) => {
  t.match(resolvePeriod(NOW, undefined, '2026-03-31'), {
    startDate: '2026-01-01',
    endDate: '2026-03-31',
    days: 90,
    defaulted: true,
    asOf: mxDayEnd('2026-03-31'),
  });
  t.match(resolvePeriod(NOW, '2026-04-01', undefined), { startDate: '2026-04-01', endDate: '2026-04-19', days: 19 });
  t.match(resolvePeriod(NOW, '2026-05-01', undefined), { startDate: '2026-05-01', endDate: '2026-07-29', days: 90 }, 'a future start gets the default length');
});

t.test('limits', async (t) => {
  t.match(resolvePeriod(NOW, '2025-04-20', '2026-04-20'), { days: 366, requestedEndDate: null }, '366 days are allowed');
  t.match(
    resolvePeriod(NOW, '2025-04-19', '2026-04-20'),
    { startDate: '2025-04-19', endDate: '2026-04-19', days: 366, requestedEndDate: '2026-04-20', end: mxDayEnd('2026-04-19') },
    '367 days are cut to their first 366, saying which end was asked for',
  );
  const inverted = resolvePeriod(NOW, '2026-04-02', '2026-04-01');
  t.match(inverted, { startDate: '2026-04-02', endDate: '2026-04-01', days: 0 }, 'an inverted range is an empty period');
  t.ok(inverted.end < inverted.start, 'an empty period contains no instant');
  t.same(monthsOf(inverted), [], 'and touches no month');
  t.match(resolvePeriod(NOW, '2026-04-01', '2026-04-01'), { days: 1 });
});

t.test('tax period', async (t) => {
  t.match(resolveTaxPeriod(NOW, undefined, undefined, undefined), {
    targetMonth: '2026-04',
    source: 'default',
    startDate: '2026-04-01',
    endDate: '2026-04-30',
    days: 30,
  });
  t.match(resolveTaxPeriod(NOW, '2026-02', undefined, undefined), {
    targetMonth: '2026-02',
    source: 'targetMonth',
    days: 28,
    start: mxDayStart('2026-02-01'),
    end: mxDayEnd('2026-02-28'),
  });
  t.match(resolveTaxPeriod(NOW, undefined, '2026-01-15', '2026-02-15'), { targetMonth: null, source: 'range', days: 32 });
  t.match(
    resolveTaxPeriod(NOW, '2026-02', '2026-02-10', '2026-03-15'),
    { targetMonth: '2026-02', source: 'targetMonth', startDate: '2026-02-10', endDate: '2026-02-28', days: 19 },
    'targetMonth with dates is their intersection',
  );
  t.match(resolveTaxPeriod(NOW, '2026-02', '2026-03-01', undefined), { days: 0 }, 'a disjoint intersection is empty');
  t.throws(() => resolveTaxPeriod(NOW, '2026-00', undefined, undefined), /Invalid query parameter/);
});

t.test('months of a period, clipped', async (t) => {
  const m = monthsOf({ start: mxDayStart('2026-01-15'), end: mxDayEnd('2026-03-02') });
  t.same(
    m.map((x) => x.month),
    ['2026-01', '2026-02', '2026-03'],
  );
  t.equal(m[0]?.start, mxDayStart('2026-01-15'));
  t.equal(m[1]?.start, mxDayStart('2026-02-01'));
  t.equal(m[2]?.endExclusive, mxDayEnd('2026-03-02') + 1);
  t.same(
    monthsOf({ start: mxDayStart('2026-12-31'), end: mxDayEnd('2027-01-01') }).map((x) => x.month),
    ['2026-12', '2027-01'],
  );
});
