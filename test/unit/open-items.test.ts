import t from 'tap';
import { itemOutstandingAt, openItemOf, OPEN_END, type OpenItemSource } from '../../lib/analytics/open-items.ts';
import { openAtFromMonths, openItemMonthsOf } from '../../lib/analytics/open-item-months.ts';
import type { CanceledRecord, PaymentRecord } from '../../lib/model/financial-document.ts';

const at = (iso: string): number => Date.parse(iso);
const payment = (uuid: string, date: string, amount: number, kind: PaymentRecord['kind'] = 'payment'): PaymentRecord => ({
  id: uuid,
  kind,
  uuid,
  date: at(date),
  amount,
  balanceBefore: 0,
  balanceAfter: 0,
  canceled: false,
});
const cancellation = (target: CanceledRecord['target'], uuid: string, date: string, status: CanceledRecord['status']): CanceledRecord => ({
  id: `X-${uuid}`,
  target,
  uuid,
  date: at(date),
  motive: '02',
  replacementUuid: null,
  status,
});
const invoice = (o: Partial<OpenItemSource>): OpenItemSource => ({
  _id: 'D1',
  id: 'D1',
  client: 'CIN010203KL5',
  clientName: 'CLIENTE',
  date: at('2026-01-10T18:00:00Z'),
  iTot: 1000,
  invoice: { uuid: 'INV' },
  payments: [],
  canceled: [],
  ...o,
});

t.test('partial payment, credit note, a payment cancelled later: the spans by hand', async (t) => {
  // 1000 issued 10 Jan; 400 paid 5 Feb; a 100 credit note 20 Feb; the 400 payment cancelled 1 Mar; 900 paid 15 Mar.
  const e = openItemOf(
    'T',
    invoice({
      payments: [
        payment('P1', '2026-02-05T18:00:00Z', 400),
        payment('NC', '2026-02-20T18:00:00Z', 100, 'creditNote'),
        payment('P2', '2026-03-15T18:00:00Z', 900),
      ],
      canceled: [cancellation('payment', 'P1', '2026-03-01T18:00:00Z', 'accepted')],
    }),
  );
  t.ok(e, 'an entry');
  t.same(
    e!.spans.map((s) => [new Date(s.from).toISOString().slice(0, 10), s.to === null ? null : new Date(s.to).toISOString().slice(0, 10), s.outstanding]),
    [
      ['2026-01-10', '2026-02-05', 1000],
      ['2026-02-05', '2026-02-20', 600],
      ['2026-02-20', '2026-03-01', 500],
      ['2026-03-01', '2026-03-15', 900],
    ],
  );
  t.equal(e!.to, at('2026-03-15T18:00:00Z'), 'closed by the last payment');
  // 18:00Z is noon in Mexico City: every instant falls on the same day there.
  const months = openItemMonthsOf('T', '2026-01-10', [e!]);
  t.same(
    months.map((m) => [m._id, m.entries.map((x) => x.key), m.spans.map((s) => s.outstanding)]),
    [
      ['T|2026-01-10|2026-01', ['T|D1'], [1000]],
      ['T|2026-01-10|2026-02', ['T|D1'], [1000, 600, 500]],
      ['T|2026-01-10|2026-03', ['T|D1'], [500, 900]],
    ],
    'each month holds the spans that touch it',
  );
  // As of 25 Feb (Mexico City noon) the February month says 500; as of 16 Mar the March month says settled.
  const feb = openAtFromMonths('T', months, at('2026-02-25T18:00:00Z'), undefined);
  t.same(
    feb.items.map((i) => [i.key, i.outstanding]),
    [['T|D1', 500]],
  );
  t.same(
    feb.days.map((d) => [d.day, d.groups.map((g) => [g.client, g.n, g.cents])]),
    [['2026-01-10', [['CIN010203KL5', 1, 50000]]]],
  );
  t.same(openAtFromMonths('T', months, at('2026-03-16T18:00:00Z'), undefined).items, [], 'settled by then');
  t.same(openAtFromMonths('T', months, at('2026-02-25T18:00:00Z'), 'XAXX010101000').items, [], 'another client: none');
  t.equal(itemOutstandingAt(e!, at('2026-01-10T17:59:59Z')), null, 'not yet emitted');
  t.equal(itemOutstandingAt(e!, at('2026-02-05T18:00:00Z')), 600, 'a payment counts from its own instant');
  t.equal(itemOutstandingAt(e!, at('2026-03-02T00:00:00Z')), 900, 'owed again once the payment is cancelled');
  t.equal(itemOutstandingAt(e!, at('2026-03-15T18:00:00Z')), null, 'settled');
});

t.test('cancelled later, USD at its rate, settled at birth, pending cancellation', async (t) => {
  const cancelled = openItemOf('T', invoice({ canceled: [cancellation('invoice', 'INV', '2026-02-01T00:00:00Z', 'accepted')] }));
  t.equal(cancelled!.to, at('2026-02-01T00:00:00Z'), 'open until its cancellation');
  t.equal(itemOutstandingAt(cancelled!, at('2026-01-31T00:00:00Z')), 1000);
  const pending = openItemOf('T', invoice({ canceled: [cancellation('invoice', 'INV', '2026-02-01T00:00:00Z', 'pending')] }));
  t.equal(pending!.to, OPEN_END, 'a pending request cancels nothing: open now');
  t.same(
    openItemMonthsOf('T', '2026-01-10', [pending!]).map((m) => m.month),
    ['open'],
    'an entry open now since its first instant: only its open month, whatever month is asked',
  );
  const usd = openItemOf('T', invoice({ currency: 'USD', exchangeRate: 18.5, iTot: 100.01 }));
  t.equal(usd!.spans[0]!.outstanding, 1850.19, '100.01 USD × 18.5 = 1850.185 → 1850.19 MXN');
  const pue = openItemOf('T', invoice({ payments: [payment('INV', '2026-01-10T18:00:00Z', 1000)] }));
  t.equal(pue, null, 'paid at its own instant: never open, no entry');
});
