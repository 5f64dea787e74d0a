import t from 'tap';
import { median, percentile, ratio, roundTo } from '../../lib/analytics/stats.ts';

t.test('median', async (t) => {
  t.equal(median([]), null);
  t.equal(median([7]), 7);
  t.equal(median([3, 1, 2]), 2);
  t.equal(median([4, 1, 3, 2]), 2.5);
  t.equal(median([-2, -1, 5]), -1);
  t.equal(median([1, Number.NaN, 3]), 2, 'non-finite values ignored');
});

t.test('percentile, linear (type 7) and nearest-rank', async (t) => {
  const ten = [10, 9, 8, 7, 6, 5, 4, 3, 2, 1];
  // rank 0.9 × 9 = 8.1 → 9 + 0.1 × (10 − 9)
  t.equal(roundTo(percentile(ten, 90)!, 10), 9.1);
  t.equal(percentile(ten, 90, 'nearest-rank'), 9, '⌈0.9 × 10⌉ = 9th value');
  t.equal(percentile(ten, 0), 1);
  t.equal(percentile(ten, 100), 10);
  t.equal(percentile(ten, 0, 'nearest-rank'), 1);
  t.equal(percentile(ten, 50), 5.5);
  t.equal(percentile(ten, 50, 'nearest-rank'), 5);
  t.equal(percentile([5], 90), 5);
  // [1, 2, 3, 4]: rank 0.25 × 3 = 0.75 → 1.75; nearest rank ⌈1⌉ → 1
  t.equal(percentile([1, 2, 3, 4], 25), 1.75);
  t.equal(percentile([1, 2, 3, 4], 25, 'nearest-rank'), 1);
  t.equal(percentile([], 90), null);
  t.throws(() => percentile(ten, 101), RangeError);
  t.throws(() => percentile(ten, Number.NaN), RangeError);
});

t.test('ratio never returns NaN or Infinity', async (t) => {
  t.same(ratio(10, 4), { value: 2.5 });
  t.same(ratio(0, 5), { value: 0 });
  t.same(ratio(1, 0), { value: null, reason: 'division by zero' });
  t.same(ratio(0, 0), { value: null, reason: 'division by zero' });
  t.same(ratio(5, 0, { denominatorLabel: 'km' }), { value: null, reason: 'no km (division by zero)' });
  t.same(ratio(Number.NaN, 2), { value: null, reason: 'non-finite input' });
  t.same(ratio(2, 3, { decimals: 4 }), { value: 0.6667 });
});

t.test('roundTo', async (t) => {
  t.equal(roundTo(0.1 + 0.2, 2), 0.3);
  t.equal(roundTo(1.005, 2), 1.01);
  t.ok(Object.is(roundTo(-0.001, 2), 0));
});
