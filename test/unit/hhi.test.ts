import t from 'tap';
import { concentration } from '../../lib/analytics/hhi.ts';
import { DEFAULT_SETTINGS } from '../../lib/model/tenant-settings.ts';

const bands = DEFAULT_SETTINGS.hhiBands; // 1,500 / 2,500 / 10 %
const equal = (n: number, revenue = 1000) => Array.from({ length: n }, (_, i) => ({ client: `C${i + 1}`, revenue }));

t.test('textbook vectors', async (t) => {
  const one = concentration([{ client: 'A', revenue: 5000 }], bands);
  t.match(one, { hhi: 10_000, band: 'high', totalRevenue: 5000, clients: 1 });
  t.same(one.shares, [{ client: 'A', revenue: 5000, sharePct: 100, flagged: true }]);

  t.match(concentration(equal(2), bands), { hhi: 5000, band: 'high' }, '50² + 50²');
  const four = concentration(equal(4), bands);
  t.match(four, { hhi: 2500, band: 'moderate' }, '4 × 25² = 2,500: the upper edge of moderate');
  t.ok(four.shares.every((s) => s.sharePct === 25 && s.flagged));
  t.match(concentration(equal(3), bands), { hhi: 3333.33, band: 'high' });
  const ten = concentration(equal(10), bands);
  t.match(ten, { hhi: 1000, band: 'unconcentrated' });
  t.ok(
    ten.shares.every((s) => s.flagged),
    'exactly 10 % is flagged (≥)',
  );
  const eleven = concentration(equal(11), bands);
  t.equal(eleven.hhi, 909.09, '11 × (100/11)²');
  t.ok(eleven.shares.every((s) => !s.flagged && s.sharePct === 9.0909));
});

t.test('uneven shares, sorting, merging', async (t) => {
  // 60 / 30 / 10 → 3,600 + 900 + 100 = 4,600
  const r = concentration(
    [
      { client: 'B', revenue: 300 },
      { client: 'C', revenue: 100 },
      { client: 'A', revenue: 400 },
      { client: 'A', revenue: 200 },
    ],
    bands,
  );
  t.equal(r.hhi, 4600);
  t.equal(r.totalRevenue, 1000);
  t.same(
    r.shares.map((s) => [s.client, s.revenue, s.sharePct]),
    [
      ['A', 600, 60],
      ['B', 300, 30],
      ['C', 100, 10],
    ],
  );
  // 30 + 5 × 10 + 4 × 5 → 900 + 500 + 100 = 1,500 exactly: moderate (unconcentrated is < 1,500)
  const edge = [30, 10, 10, 10, 10, 10, 5, 5, 5, 5].map((revenue, i) => ({ client: `E${i}`, revenue }));
  t.match(concentration(edge, bands), { hhi: 1500, band: 'moderate' });
  // without the 30 % client: 5 × (100/7)² + 4 × (50/7)² = 1,224.49
  t.match(concentration(edge.slice(1), bands), { hhi: 1224.49, band: 'unconcentrated' });
  const custom = concentration(equal(4), { ...bands, highlyConcentratedAbove: 2000 });
  t.equal(custom.band, 'high', 'bands are configurable');
});

t.test('negative revenue counts as 0', async (t) => {
  const r = concentration(
    [
      { client: 'A', revenue: 1000 },
      { client: 'B', revenue: -200 },
    ],
    bands,
  );
  t.equal(r.hhi, 10_000);
  t.same(r.shares[1], { client: 'B', revenue: 0, sharePct: 0, flagged: false });
});

t.test('zero total revenue → null with an explanation, never NaN', async (t) => {
  const r = concentration([{ client: 'A', revenue: 0 }], bands);
  t.equal(r.hhi, null);
  t.equal(r.band, null);
  t.equal(r.totalRevenue, 0);
  t.match(r.explanation, /Total revenue is 0/);
  t.same(r.shares, [{ client: 'A', revenue: 0, sharePct: null, flagged: false }]);
  t.equal(concentration([], bands).hhi, null);
});
