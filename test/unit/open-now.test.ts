/**
 * The sums of the invoices open now (lib/analytics/open-now.ts) and the reports' folds of them,
 * on hand-computed values: a day's groups per client from its entries (now and at an earlier
 * instant), aging's buckets and names from the groups, the forecast's buckets, overdue and
 * client rows.
 */
import t from 'tap';
import { forecastOpenNow, openDayAt, openNowDayOf, type OpenNowDay } from '../../lib/analytics/open-now.ts';
import { AgingAccumulator } from '../../lib/analytics/receivables-aging.ts';
import { OPEN_END, type OpenItem } from '../../lib/analytics/open-items.ts';
import type { PaymentDelays } from '../../lib/analytics/forecast.ts';
import { parseMxDateTime as at } from '../../lib/time/mexico-city.ts';

const DAY = '2026-03-10';
function entry(id: string, client: string, clientName: string, wall: string, spans: OpenItem['spans']): OpenItem {
  const last = spans[spans.length - 1] as OpenItem['spans'][number];
  return {
    _id: `T|${id}`,
    tenant: 'T',
    day: DAY,
    id,
    uuid: `U-${id}`,
    client,
    clientName,
    date: at(wall),
    currency: null,
    exchangeRate: null,
    to: last.to ?? OPEN_END,
    spans,
  };
}
// A: a1 open since its date; a0 owed 200 until the 14th, then (a payment cancelled) 50.25 from the 20th.
// B: b1 paid on the 15th (closed); b2 owes less than a cent in MXN.
const E = [
  entry('a1', 'A', 'A uno', `${DAY}T09:00`, [{ from: at(`${DAY}T09:00`), to: null, outstanding: 100.5 }]),
  entry('a0', 'A', 'A dos', `${DAY}T18:00`, [
    { from: at(`${DAY}T18:00`), to: at('2026-03-14T00:00'), outstanding: 200 },
    { from: at('2026-03-20T10:00'), to: null, outstanding: 50.25 },
  ]),
  entry('b1', 'B', 'B uno', `${DAY}T12:00`, [{ from: at(`${DAY}T12:00`), to: at('2026-03-15T00:00'), outstanding: 70 }]),
  entry('b2', 'B', 'B cero', `${DAY}T08:00`, [{ from: at(`${DAY}T08:00`), to: null, outstanding: 0.004 }]),
];

t.test('a day sums its entries open now per client; at an earlier instant, those open then', async (t) => {
  const now = openNowDayOf('T', DAY, E);
  t.same(now, {
    _id: `T|${DAY}`,
    tenant: 'T',
    day: DAY,
    horizon: at('2026-03-20T10:00'), // a0's last span starts last
    groups: [
      { client: 'A', n: 2, nPos: 2, cents: 10050 + 5025, lastDate: at(`${DAY}T18:00`), lastId: 'a0', lastName: 'A dos', firstId: 'a0', firstName: 'A dos' },
      { client: 'B', n: 1, nPos: 0, cents: 0, lastDate: at(`${DAY}T08:00`), lastId: 'b2', lastName: 'B cero', firstId: null, firstName: null },
    ],
  });
  // The 12th: a0 owes 200, b1 is still open.
  const then = openDayAt('T', DAY, E, at('2026-03-12T00:00'));
  t.same(then?.groups, [
    { client: 'A', n: 2, nPos: 2, cents: 10050 + 20000, lastDate: at(`${DAY}T18:00`), lastId: 'a0', lastName: 'A dos', firstId: 'a0', firstName: 'A dos' },
    { client: 'B', n: 2, nPos: 1, cents: 7000, lastDate: at(`${DAY}T12:00`), lastId: 'b1', lastName: 'B uno', firstId: 'b1', firstName: 'B uno' },
  ]);
  // The 16th: a0 in its gap (not open), b1 paid.
  t.same(
    openDayAt('T', DAY, E, at('2026-03-16T00:00'))?.groups.map((g) => [g.client, g.n, g.cents]),
    [
      ['A', 1, 10050],
      ['B', 1, 0],
    ],
  );
  t.equal(
    openNowDayOf(
      'T',
      DAY,
      E.filter((e) => e.id === 'b1'),
    ),
    null,
    'no entry open now: no day',
  );
});

const creditDays = (c: string): number => ({ A: 30 })[c] ?? 0;
const day1 = openNowDayOf('T', DAY, E) as OpenNowDay;
const day2: OpenNowDay = {
  _id: 'T|2026-04-14',
  tenant: 'T',
  day: '2026-04-14',
  horizon: at('2026-04-14T10:00'),
  groups: [
    { client: 'B', n: 1, nPos: 1, cents: 9999, lastDate: at('2026-04-14T10:00'), lastId: 'b9', lastName: 'B nueve', firstId: 'b9', firstName: 'B nueve' },
  ],
};

t.test('aging from the groups: buckets by due day, the client named after its latest invoice', async (t) => {
  const aging = new AgingAccumulator('2026-04-15', creditDays, 5);
  for (const g of day1.groups) aging.addGroup(g.client, day1.day, g.n, g.cents, { date: g.lastDate, id: g.lastId, name: g.lastName });
  // A: due 2026-04-09, 6 days past due. B: due 2026-03-10, 36 days.
  const r = aging.result();
  t.same(r.totals, {
    openInvoices: 3,
    outstanding: 150.75,
    buckets: {
      current: { invoices: 0, amount: 0 },
      days1to30: { invoices: 2, amount: 150.75 },
      days31to60: { invoices: 1, amount: 0 },
      days61to90: { invoices: 0, amount: 0 },
      over90: { invoices: 0, amount: 0 },
    },
  });
  t.same(
    r.clients.data.map((c) => [c.client, c.clientName, c.openInvoices, c.outstanding]),
    [
      ['A', 'A dos', 2, 150.75],
      ['B', 'B cero', 1, 0],
    ],
  );
  t.same([r.items.total, r.items.listed], [3, 0], 'every invoice summed counts as an item, listed or not');
});

t.test('the forecast from the groups: expected days, buckets, overdue and client rows', async (t) => {
  const delays: PaymentDelays = {
    byClient: new Map([['A', 2.5]]),
    basis: new Map([['A', 'client' as const]]),
    paymentsByClient: new Map([['A', 4]]),
    portfolioMedianDays: 1,
  };
  // A: due 04-09, expected 04-09 + round(2.5) = 04-12 (overdue). B (day2): due 04-14, expected 04-15 (the portfolio's 1 day).
  // B's invoice of day1 owes less than a cent: not an item. asOf Wednesday 04-15: one weekly bucket, 04-15..04-19.
  const f = forecastOpenNow([day1, day2], undefined, { creditDaysDefault: 0, creditDaysByClient: { A: 30 } }, delays, at('2026-04-15T12:00'), 'week');
  t.same(f.openInvoices, 3);
  t.same(f.totalExpectedC, 15075 + 9999);
  t.same(f.overdue, { expected: 150.75, invoices: 2, oldestExpectedDate: '2026-04-12' });
  t.same(f.buckets, [{ key: '2026-04-15', start: '2026-04-15', end: '2026-04-19', expected: 99.99, invoices: 1 }]);
  t.same(f.receivables.pastDue, { invoices: 3, amount: 250.74 });
  t.same(f.receivables.notYetDue, { invoices: 0, amount: 0 });
  t.same(f.receivables.outstanding, 250.74);
  t.same(f.receivables.clients, [
    {
      client: 'A',
      clientName: 'A dos',
      openInvoices: 2,
      outstanding: 150.75,
      pastDue: 150.75,
      creditDays: 30,
      creditDaysSource: 'client',
      delayDays: 2.5,
      delayBasis: 'client',
      paymentsInHistory: 4,
      nextExpectedDate: null,
    },
    {
      client: 'B',
      clientName: 'B nueve',
      openInvoices: 1,
      outstanding: 99.99,
      pastDue: 99.99,
      creditDays: 0,
      creditDaysSource: 'default',
      delayDays: 1,
      delayBasis: 'portfolio',
      paymentsInHistory: 0,
      nextExpectedDate: null,
    },
  ]);
  // Monthly and as of the 1st: A's 04-12 and B's 04-15 are both ahead; B's due day is not past.
  const m = forecastOpenNow([day1, day2], 'B', { creditDaysDefault: 0, creditDaysByClient: { A: 30 } }, delays, at('2026-04-01T12:00'), 'month');
  t.same(m.buckets, [{ key: '2026-04', start: '2026-04-01', end: '2026-04-30', expected: 99.99, invoices: 1 }]);
  t.same(
    m.receivables.clients.map((c) => [c.client, c.nextExpectedDate, c.pastDue]),
    [['B', '2026-04-15', 0]],
  );
  t.same(m.overdue, { expected: 0, invoices: 0, oldestExpectedDate: null });
});
