import t from 'tap';
import {
  clientPaymentDelays,
  clientReceivables,
  delayFor,
  dso,
  dueInstant,
  forecastInflows,
  openInvoicesOf,
  pastPayments,
  type PastPayment,
} from '../../lib/analytics/forecast.ts';
import { parseMxDateTime as at } from '../../lib/time/mexico-city.ts';

// A: delays 2, 5, 10 days (own median 5). B: one payment 20 days late.
// Portfolio: [2, 5, 10, 20] → 7.5.
const past: PastPayment[] = [
  { client: 'A', dueDate: at('2026-01-10T10:00'), paidDate: at('2026-01-12T23:00') },
  { client: 'A', dueDate: at('2026-01-20T10:00'), paidDate: at('2026-01-25T08:00') },
  { client: 'A', dueDate: at('2026-02-01T10:00'), paidDate: at('2026-02-11T00:30') },
  { client: 'B', dueDate: at('2026-01-05T10:00'), paidDate: at('2026-01-25T10:00') },
];

t.test('payment delays: client median with ≥ 3 payments, else portfolio median', async (t) => {
  const d = clientPaymentDelays(past);
  t.equal(d.portfolioMedianDays, 7.5);
  t.equal(d.byClient.get('A'), 5);
  t.equal(d.basis.get('A'), 'client');
  t.equal(d.byClient.get('B'), 7.5);
  t.equal(d.basis.get('B'), 'portfolio');
  t.equal(d.paymentsByClient.get('B'), 1);
  t.same(delayFor(d, 'NEW'), { delayDays: 7.5, basis: 'portfolio' });
  t.same(delayFor(clientPaymentDelays([]), 'NEW'), { delayDays: 0, basis: 'none' });
  // Early payment: negative delay kept. Calendar days in Mexico City: 23:30 local on the 9th is the 9th.
  const early = clientPaymentDelays([{ client: 'E', dueDate: at('2026-03-10T09:00'), paidDate: at('2026-03-09T23:30') }], 1);
  t.equal(early.byClient.get('E'), -1);
});

t.test('forecast buckets by week from asOf, overdue kept apart', async (t) => {
  const delays = clientPaymentDelays(past);
  const creditDays = (c: string): number => (c === 'C' ? 15 : 30);
  const asOf = at('2026-03-04T12:00'); // a Wednesday
  const f = forecastInflows(
    [
      // due 2026-03-03 + 5 → expected Sun 2026-03-08 (first bucket)
      { id: 'i1', client: 'A', invoiceDate: at('2026-02-01T10:00'), outstanding: 11_200 },
      // due 2026-02-14 + round(7.5) = 8 → 2026-02-22: overdue
      { id: 'i2', client: 'B', invoiceDate: at('2026-01-15T10:00'), outstanding: 5000.1 },
      // unknown client, 15 days: due 2026-03-25 + 8 → Thu 2026-04-02
      { id: 'i3', client: 'C', invoiceDate: at('2026-03-10T10:00'), outstanding: 1000.2 },
      { id: 'i4', client: 'A', invoiceDate: at('2026-03-01T10:00'), outstanding: 0 },
    ],
    creditDays,
    delays,
    asOf,
    'week',
  );
  t.equal(f.asOf, '2026-03-04');
  t.same(f.overdue, { expected: 5000.1, invoices: 1, invoiceIds: ['i2'], oldestExpectedDate: '2026-02-22' });
  t.same(
    f.buckets.map((b) => [b.start, b.end, b.expected, b.invoices]),
    [
      ['2026-03-04', '2026-03-08', 11_200, 1],
      ['2026-03-09', '2026-03-15', 0, 0],
      ['2026-03-16', '2026-03-22', 0, 0],
      ['2026-03-23', '2026-03-29', 0, 0],
      ['2026-03-30', '2026-04-05', 1000.2, 1],
    ],
  );
  t.equal(f.totalExpected, 17_200.3);
  t.same(
    f.items.map((i) => [i.id, i.dueDate, i.expectedDate, i.delayBasis, i.overdue]),
    [
      ['i2', '2026-02-14', '2026-02-22', 'portfolio', true],
      ['i1', '2026-03-03', '2026-03-08', 'client', false],
      ['i3', '2026-03-25', '2026-04-02', 'portfolio', false],
    ],
  );

  const m = forecastInflows(
    [
      { id: 'i1', client: 'A', invoiceDate: at('2026-02-01T10:00'), outstanding: 11_200 },
      { id: 'i3', client: 'C', invoiceDate: at('2026-03-10T10:00'), outstanding: 1000.2 },
    ],
    creditDays,
    delays,
    asOf,
    'month',
  );
  t.same(
    m.buckets.map((b) => [b.key, b.start, b.end, b.expected]),
    [
      ['2026-03', '2026-03-04', '2026-03-31', 11_200],
      ['2026-04', '2026-04-01', '2026-04-30', 1000.2],
    ],
  );
  t.same(m.overdue, { expected: 0, invoices: 0, invoiceIds: [], oldestExpectedDate: null });

  const none = forecastInflows([], creditDays, delays, asOf, 'month');
  t.same(
    none.buckets.map((b) => [b.start, b.end, b.expected]),
    [['2026-03-04', '2026-03-31', 0]],
    'one empty bucket, stable shape',
  );
});

t.test('DSO', async (t) => {
  t.same(dso(50_000, 150_000, 90), { value: 30 });
  t.same(dso(10_000, 30_000, 31), { value: 10.33 });
  t.same(dso(50_000, 0, 90), { value: null, reason: 'no credit sales in the period (division by zero)' });
});

t.test('past payments: due on invoice day + credit days (Mexico City)', async (t) => {
  const credit = (c: string) => (c === 'A' ? 15 : 30);
  t.equal(dueInstant(at('2026-01-10T23:30'), 15), at('2026-01-25T00:00'), 'invoice day 10th + 15 days, at the day start');
  t.same(
    pastPayments(
      [
        { client: 'A', date: at('2026-01-10T23:30'), paid: [at('2026-01-27T10:00'), at('2026-01-30T10:00')] },
        { client: 'B', date: at('2026-02-01T08:00'), paid: [] },
        { client: 'C', date: at('2026-02-01T08:00'), paid: [at('2026-03-01T08:00')] },
      ],
      credit,
    ),
    [
      { client: 'A', dueDate: at('2026-01-25T00:00'), paidDate: at('2026-01-27T10:00') },
      { client: 'A', dueDate: at('2026-01-25T00:00'), paidDate: at('2026-01-30T10:00') },
      { client: 'C', dueDate: at('2026-03-03T00:00'), paidDate: at('2026-03-01T08:00') }, // Feb 1 + 30 days, paid 2 days early
    ],
  );
});

t.test('open invoices: exact balances, cancelled and settled ones dropped', async (t) => {
  const pay = (uuid: string, amount: number, kind: 'payment' | 'creditNote' = 'payment', canceled = false) => ({
    id: uuid,
    kind,
    uuid,
    date: at('2026-02-01T10:00'),
    amount,
    balanceBefore: 0,
    balanceAfter: 0,
    canceled,
  });
  const cx = (target: 'invoice' | 'payment', uuid: string) => ({
    id: `cx-${uuid}`,
    target,
    uuid,
    date: at('2026-02-02T10:00'),
    motive: '02' as const,
    replacementUuid: null,
  });
  const inv = (id: string, iTot: number, payments: ReturnType<typeof pay>[], canceled: ReturnType<typeof cx>[] = []) => ({
    id,
    client: 'A',
    clientName: 'Alfa',
    date: at('2026-01-15T10:00'),
    iTot,
    invoice: { uuid: `U-${id}` },
    payments,
    canceled,
  });
  const { invoices, byId } = openInvoicesOf([
    inv('1', 1000.1, [pay('p1', 300.05), pay('p2', 100, 'creditNote')]), // 600.05 owed
    inv('2', 500, [pay('p3', 500)]), // settled
    inv('3', 500, [], [cx('invoice', 'u-3')]), // cancelled (UUID case ignored)
    inv('4', 500, [pay('p4', 500, 'payment', true)]), // the only payment is cancelled: all owed
    inv('5', 500, [pay('p5', 200)], [cx('payment', 'P5')]), // payment named by a cancellation record
  ]);
  t.same(
    invoices.map((i) => [i.id, i.outstanding]),
    [
      ['1', 600.05],
      ['4', 500],
      ['5', 500],
    ],
  );
  t.same([...byId.keys()], ['1', '4', '5']);
});

t.test('receivables per client: past due, next expected, terms applied', async (t) => {
  const delays = clientPaymentDelays(past); // A: own median 5; B: portfolio 7.5
  const items = [
    { id: 'i1', client: 'A', outstanding: 100.1, expectedDate: '2026-03-01', pastDue: true },
    { id: 'i2', client: 'B', outstanding: 500, expectedDate: '2026-03-20', pastDue: false },
    { id: 'i3', client: 'A', outstanding: 200.2, expectedDate: '2026-03-15', pastDue: false },
    { id: 'i4', client: 'A', outstanding: 50, expectedDate: '2026-03-10', pastDue: false },
  ];
  const names: Record<string, string> = { i1: 'Alfa', i2: 'Beta', i3: 'Alfa SA' };
  const r = clientReceivables(items, { creditDaysDefault: 30, creditDaysByClient: { B: 45 }, clientName: (id) => names[id] ?? '' }, delays);
  t.same(r.clients, [
    {
      client: 'B',
      clientName: 'Beta',
      openInvoices: 1,
      outstanding: 500,
      pastDue: 0,
      creditDays: 45,
      creditDaysSource: 'client',
      delayDays: 7.5,
      delayBasis: 'portfolio',
      paymentsInHistory: 1,
      nextExpectedDate: '2026-03-20',
    },
    {
      client: 'A',
      clientName: 'Alfa',
      openInvoices: 3,
      outstanding: 350.3,
      pastDue: 100.1,
      creditDays: 30,
      creditDaysSource: 'default',
      delayDays: 5,
      delayBasis: 'client',
      paymentsInHistory: 3,
      nextExpectedDate: '2026-03-10',
    },
  ]);
  t.same(r.pastDue, { invoices: 1, amount: 100.1 });
  t.same(r.notYetDue, { invoices: 3, amount: 750.2 });
  t.equal(r.outstanding, 850.3);
});
