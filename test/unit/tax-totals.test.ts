import t from 'tap';
import { reconcileDocument } from '../../lib/tax/reconcile.ts';
import { aggregateReconciliations, byMonth } from '../helpers/reconciliation-totals.ts';
import {
  addAmounts,
  exemptBreakdownC,
  FIELDS,
  mapAmounts,
  invoiceBasisContribution,
  paymentBasisContributions,
  TaxTotalsAccumulator,
} from '../../lib/tax/tax-totals.ts';
import { FindingsCollector } from '../../lib/tax/findings-list.ts';
import { monthsOf } from '../../lib/shared/period.ts';
import { mxDayEnd, mxDayStart, mxMonthRange } from '../../lib/time/mexico-city.ts';
import { addUpTaxMonth, paymentBasisDay, rollUpTaxPaymentDay } from '../../lib/tax/tax-day-rollup.ts';
import { CLIENT_COMPANY, CLIENT_COMPANY_2, CLIENT_PERSON, demurrage, freight, indemnity, makeFinancialDoc, payment, shortage } from '../fixtures/documents.ts';

const SETTINGS = { vatRate: 0.16, retentionRate: 0.04, discrepancyTolerance: 0.01 };
const slices = (from: string, to: string) => monthsOf({ start: mxDayStart(from), end: mxDayEnd(to) });

t.test('exempt breakdown by kind; header-only documents count iFalt as shortage', async (t) => {
  const doc = makeFinancialDoc({
    concepts: [freight(1_000), shortage(120.5), indemnity(80), { kind: 'other', code: '01010101', objetoImp: '01', amount: 10 }],
  });
  const r = reconcileDocument(doc, SETTINGS);
  t.same(exemptBreakdownC(doc, r), { shortage: 12_050, indemnity: 8_000, other: 1_000 });
  t.equal(r.exemptAmount, 210.5);
  const legacy = makeFinancialDoc({ concepts: [freight(1_000), shortage(50)] });
  legacy.invoice.concepts = [];
  const rl = reconcileDocument(legacy, SETTINGS);
  t.same(exemptBreakdownC(legacy, rl), { shortage: 5_000, indemnity: 0, other: 0 });
});

t.test('invoice basis totals equal aggregateReconciliations (cents, cancelled apart)', async (t) => {
  const docs = [
    makeFinancialDoc({ client: CLIENT_COMPANY, date: '2026-03-01T00:00', concepts: [freight(1_234.56, { discount: 34.56 }), shortage(99.99), demurrage(500)] }),
    makeFinancialDoc({ client: CLIENT_COMPANY_2, date: '2026-03-31T23:59', concepts: [freight(0.1), freight(0.2)] }),
    makeFinancialDoc({ client: CLIENT_PERSON, date: '2026-04-01T00:00', concepts: [freight(777.77, { vat: 200 })] }),
    makeFinancialDoc({
      client: CLIENT_COMPANY,
      date: '2026-04-15T12:00',
      concepts: [freight(10_000)],
      cancelled: { motive: '01', replacementUuid: 'b1b2c3d4-0000-4000-8000-000000000001' },
    }),
  ];
  const results = docs.map((d) => reconcileDocument(d, SETTINGS));
  const acc = new TaxTotalsAccumulator('invoice');
  results.forEach((r, i) => acc.add(invoiceBasisContribution(docs[i]!, r)));
  const { totals, months } = acc.result(['2026-03', '2026-04']);
  const reference = aggregateReconciliations(results, byMonth);
  for (const [i, m] of months.entries()) {
    const ref = reference[i]!;
    t.equal(m.month, ref.key);
    t.match(
      m.totals,
      {
        documents: ref.documents,
        cancelledDocuments: ref.cancelledDocuments,
        cancelledTotal: ref.cancelledTotal,
        subtotal: ref.subtotal,
        discount: ref.discount,
        taxableBase: ref.taxableBase,
        freightBase: ref.freightBase,
        exempt: { total: ref.exemptAmount },
        vat: { declared: ref.vatDeclared, expected: ref.vatExpected, difference: ref.vatDifference },
        retention: { declared: ref.retentionDeclared, expected: ref.retentionExpected, difference: ref.retentionDifference },
        total: ref.total,
        collected: null,
        findings: { discrepancies: ref.discrepancies, warnings: ref.warnings, infos: ref.infos },
        documentsWithDiscrepancies: ref.documentsWithDiscrepancies,
      },
      m.month,
    );
  }
  t.equal(totals.subtotal, 1_234.56 + 99.99 + 500 + 0.3 + 777.77);
  t.equal(totals.vat.difference, 75.56, 'the person invoice declares 200 instead of 124.44');
  t.same(
    months[1]?.clients.map((c) => c.clientKind),
    ['company', 'person'],
  );
});

t.test('payment basis: proportional per month, capped at the Total, cancelled counted once', async (t) => {
  // Total 11,200 (10,000 + 1,600 − 400); paid 2,800 in March and 8,400 + 100 extra in April.
  const doc = makeFinancialDoc({
    date: '2026-02-20T10:00',
    paymentMethod: 'PPD',
    concepts: [freight(10_000)],
    payments: [payment(2_800, '2026-03-10'), payment(8_400, '2026-04-10'), payment(100, '2026-04-11')],
  });
  const r = reconcileDocument(doc, SETTINGS);
  const parts = paymentBasisContributions(doc, r, slices('2026-03-01', '2026-04-30'));
  t.same(
    parts.map((p) => [p.month, p.first, p.amounts.collected, p.amounts.vatDeclared, p.amounts.retentionDeclared, p.amounts.taxableBase]),
    [
      ['2026-03', true, 280_000, 40_000, 10_000, 250_000],
      ['2026-04', false, 840_000, 120_000, 30_000, 750_000],
    ],
  );
  const cancelled = makeFinancialDoc({ date: '2026-04-02T10:00', paymentMethod: 'PUE', concepts: [freight(1_000)], cancelled: true });
  const rc = reconcileDocument(cancelled, SETTINGS);
  const c = paymentBasisContributions(cancelled, rc, slices('2026-03-01', '2026-04-30'));
  t.equal(c.length, 1);
  t.match(c[0], { month: '2026-04', cancelled: true, cancelledTotalC: 112_000, amounts: { total: 0 } });

  const acc = new TaxTotalsAccumulator('payment');
  for (const p of [...parts, ...c]) acc.add(p);
  const { totals, months } = acc.result(['2026-03', '2026-04']);
  t.match(totals, {
    documents: 1,
    cancelledDocuments: 1,
    collected: 11_200,
    total: 11_200,
    vat: { declared: 1_600, expected: 1_600 },
    retention: { declared: 400 },
  });
  t.match(
    months.map((m) => m.totals.documents),
    [1, 1],
    'a document paid in two months is in both months',
  );
});

t.test('findings list: severity order, cap, filter, counts', async (t) => {
  const docs = [
    makeFinancialDoc({ id: 'b', date: '2026-03-02T10:00', concepts: [freight(100, { vat: 99 }), shortage(5)] }),
    makeFinancialDoc({ id: 'a', date: '2026-03-01T10:00', client: CLIENT_COMPANY, concepts: [freight(100, { retention: 0 })], iTax2: 0 }),
  ];
  const all = new FindingsCollector(10, null);
  for (const d of docs) all.add(reconcileDocument(d, SETTINGS), '2026-03');
  const report = all.report();
  const rank = { discrepancy: 0, warning: 1, info: 2 } as const;
  t.ok(
    report.items.every((f, i, a) => i === 0 || rank[a[i - 1]!.kind] <= rank[f.kind]),
    'discrepancies, then warnings, then info',
  );
  t.same(
    report.items.map((f) => `${f.kind}:${f.code}:${f.docId}`),
    ['discrepancy:VAT_MISMATCH:b', 'warning:RETENTION_MISSING:a', 'info:EXEMPT_EXCLUDED:b'],
  );
  t.equal(report.total, report.byKind.discrepancy + report.byKind.warning + report.byKind.info);
  const one = new FindingsCollector(1, 'warning');
  for (const d of docs) one.add(reconcileDocument(d, SETTINGS), '2026-03');
  const r1 = one.report();
  t.match(r1, { kind: 'warning', limit: 1, listed: 1, total: report.total });
  t.equal(r1.items[0]?.kind, 'warning');
});

t.test('findings list stays bounded and keeps the earliest', async (t) => {
  const c = new FindingsCollector(3, null);
  for (let i = 999; i >= 0; i -= 1) {
    const day = String(1 + (i % 28)).padStart(2, '0');
    c.add(
      reconcileDocument(
        makeFinancialDoc({ id: `d${String(i).padStart(4, '0')}`, date: `2026-02-${day}T10:00`, concepts: [freight(100, { vat: 17 })] }),
        SETTINGS,
      ),
      '2026-02',
    );
  }
  const r = c.report();
  t.equal(r.byKind.discrepancy, 1000);
  t.same(
    r.items.map((f) => f.docId),
    ['d0000', 'd0028', 'd0056'],
    'earliest invoice date first, then id',
  );
});

t.test('every amount in MXN: a USD invoice at its TipoCambio, its cash share at the rate of the payment', async (t) => {
  // USD 1,000 freight + IVA 0%, TipoCambio 17.25; paid 600 USD on 2026-03-20 at 17.80 and 400 on 2026-04-10 (no rate of its own: the invoice's).
  const zero = { tax: 'IVA' as const, factor: 'Tasa' as const, rate: 0, base: 1_000, amount: 0 };
  const doc = makeFinancialDoc({
    client: 'XEXX010101000',
    currency: 'USD',
    exchangeRate: 17.25,
    date: '2026-03-05T10:00',
    paymentMethod: 'PPD',
    concepts: [freight(1_000, { taxes: { transfers: [zero], retentions: [] } })],
    payments: [payment(600, '2026-03-20T12:00', { exchangeRate: 17.8 }), payment(400, '2026-04-10T12:00')],
  });
  const r = reconcileDocument(doc, SETTINGS);
  const inv = invoiceBasisContribution(doc, r);
  t.match(inv.amounts, { subtotal: 1_725_000, total: 1_725_000, vatBase0: 1_725_000, vatDeclared: 0, transferredTaxes: 0 }, '1,000 USD × 17.25');
  const [march, april] = paymentBasisContributions(doc, r, slices('2026-03-01', '2026-04-30'));
  t.match(march!.amounts, { collected: 1_068_000, total: 1_068_000, subtotal: 1_068_000 }, '600 USD × 17.80');
  t.match(april!.amounts, { collected: 690_000, total: 690_000 }, '400 USD × 17.25');
  const acc = new TaxTotalsAccumulator('invoice');
  acc.add(inv);
  t.match(acc.result(['2026-03']).totals, { subtotal: 17_250, total: 17_250, vatBases: { rate0: 17_250 } });
  const cancelled = makeFinancialDoc({ currency: 'USD', exchangeRate: 17.25, concepts: [freight(100)], cancelled: true });
  t.equal(
    invoiceBasisContribution(cancelled, reconcileDocument(cancelled, SETTINGS)).cancelledTotalC,
    Math.round(cancelled.iTot * 17.25 * 100),
    'the cancelled Total in MXN too',
  );
});

t.test('addAmounts adds every field', async (t) => {
  const into = Object.fromEntries(FIELDS.map((f) => [f, 1])) as Record<(typeof FIELDS)[number], number>;
  const from = Object.fromEntries(FIELDS.map((f, i) => [f, i + 10])) as Record<(typeof FIELDS)[number], number>;
  addAmounts(into, from);
  t.same(into, Object.fromEntries(FIELDS.map((f, i) => [f, i + 11])));
});

t.test('mapAmounts maps every field', async (t) => {
  const from = Object.fromEntries(FIELDS.map((f, i) => [f, i])) as Record<(typeof FIELDS)[number], number>;
  t.same(
    mapAmounts(from, (c) => c * 2),
    Object.fromEntries(FIELDS.map((f, i) => [f, i * 2])),
  );
});

t.test('payment basis kept by day: a document lies on its first day in the month, and the days add up to the month', async (t) => {
  // The same invoice as above (Total 11,200): paid 2,800 on 10 March, 8,400 on 10 April and 100 more on 11 April.
  const doc = makeFinancialDoc({
    date: '2026-02-20T10:00',
    paymentMethod: 'PPD',
    concepts: [freight(10_000)],
    payments: [payment(8_400, '2026-04-10'), payment(2_800, '2026-03-10'), payment(100, '2026-04-11')],
  });
  const month = (m: string) => ({ month: m, ...mxMonthRange(m) });
  t.equal(paymentBasisDay(doc, month('2026-02')), null, 'a PPD invoice is not in the month of its date');
  t.equal(paymentBasisDay(doc, month('2026-03')), '2026-03-10');
  t.equal(paymentBasisDay(doc, month('2026-04')), '2026-04-10', 'its first payment of the month, whatever their order');
  const pue = makeFinancialDoc({ date: '2026-04-02T10:00', paymentMethod: 'PUE', concepts: [freight(1_000)], payments: [payment(1_160, '2026-03-30')] });
  t.equal(paymentBasisDay(pue, month('2026-04')), '2026-04-02', 'a PUE invoice: its date');
  t.equal(paymentBasisDay(pue, month('2026-03')), '2026-03-30', 'or a payment record dated in the month');

  // April from its days: the PPD invoice on the 10th (8,400 + 100 capped at the 8,400 left), the PUE one on the 2nd.
  const other = makeFinancialDoc({ date: '2026-04-02T10:00', paymentMethod: 'PUE', client: CLIENT_COMPANY_2, concepts: [freight(1_000)] });
  const days = [rollUpTaxPaymentDay('TENANT', '2026-04-10', [doc], SETTINGS).rollup, rollUpTaxPaymentDay('TENANT', '2026-04-02', [other], SETTINGS).rollup];
  const april = addUpTaxMonth('TENANT', '2026-04', days, SETTINGS);
  t.equal(april._id, 'TENANT|payment|2026-04');
  const acc = new TaxTotalsAccumulator('payment');
  for (const row of april.rows) acc.addDayRow('2026-04', row);
  const { totals } = acc.result(['2026-04']);
  // 8,400 of the first (capped at its Total) + the second's Total 1,120 (1,000 + 160 VAT − 40 retained); VAT 1,200 + 160.
  t.match(totals, { documents: 2, collected: 9_520, vat: { declared: 1_360 } });
  t.same(
    april.rows.map((r) => [r.client, r.acc.documents]),
    [CLIENT_COMPANY, CLIENT_COMPANY_2].sort().map((c) => [c, 1]),
  );
});
