import t from 'tap';
import { agingBucket, AgingAccumulator } from '../../lib/analytics/receivables-aging.ts';

t.test('buckets by days past due: the edges of each', async (t) => {
  const cases: [number, string][] = [
    [-45, 'current'],
    [0, 'current'],
    [1, 'days1to30'],
    [30, 'days1to30'],
    [31, 'days31to60'],
    [60, 'days31to60'],
    [61, 'days61to90'],
    [90, 'days61to90'],
    [91, 'over90'],
    [2_000, 'over90'],
  ];
  for (const [days, bucket] of cases) t.equal(agingBucket(days), bucket, `${days} days`);
});

t.test('due day and days past due across months, sums in cents', async (t) => {
  // Invoice 2026-01-31 at 23:30 Mexico City (05:30Z next day): due 30 days later, 2026-03-02; on 2026-03-31: 29 days.
  const acc = new AgingAccumulator('2026-03-31', () => 30, 10);
  const base = { uuid: 'U', clientName: 'C', currency: 'MXN', exchangeRate: 1 };
  acc.add({ ...base, id: 'a', client: 'C1', invoiceDate: Date.parse('2026-02-01T05:30:00Z'), outstanding: 0.1 });
  acc.add({ ...base, id: 'b', client: 'C1', invoiceDate: Date.parse('2026-02-01T05:30:00Z'), outstanding: 0.2 });
  const r = acc.result();
  t.match(r.items.data[0], { dueDate: '2026-03-02', daysPastDue: 29, bucket: 'days1to30' });
  t.equal(r.totals.outstanding, 0.3, '0.1 + 0.2 is 0.30 in cents');
  t.same(r.totals.buckets.days1to30, { invoices: 2, amount: 0.3 });
});
