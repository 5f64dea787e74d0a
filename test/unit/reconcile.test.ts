import t from 'tap';
import { DEFAULT_SETTINGS } from '../../lib/model/tenant-settings.ts';
import { isFreightConcept, reconcileDocument, type Finding } from '../../lib/tax/reconcile.ts';
import { aggregateReconciliations, byClient, byMonth } from '../helpers/reconciliation-totals.ts';
import { cashBasisForPeriod, cashBasisShare } from '../../lib/tax/cash-basis.ts';
import { mxMonthRange } from '../../lib/time/mexico-city.ts';
import {
  CLIENT_COMPANY,
  CLIENT_COMPANY_2,
  CLIENT_PERSON,
  PUBLIC_RFC,
  creditNote,
  demurrage,
  freight,
  makeFinancialDoc,
  payment,
  shortage,
} from '../fixtures/documents.ts';

const settings = DEFAULT_SETTINGS;
const codes = (fs: Finding[]): string[] => fs.map((f) => `${f.kind}:${f.code}`);
const discrepancies = (fs: Finding[]): Finding[] => fs.filter((f) => f.kind === 'discrepancy');

t.test('shortage line is excluded from the bases: correct retention raises NO discrepancy', async (t) => {
  // Freight 10,000 + shortage 500 (ObjetoImp 01): SubTotal 10,500, VAT 1,600, retention 400, Total 11,700.
  // The naive check (4 % × 10,500 = 420 ≠ 400) would flag it.
  const doc = makeFinancialDoc({ client: CLIENT_COMPANY, concepts: [freight(10_000), shortage(500)] });
  t.equal(doc.iTot, 11_700);
  const r = reconcileDocument(doc, settings);
  t.match(r, {
    clientKind: 'company',
    cancelled: false,
    subtotal: 10_500,
    discount: 0,
    taxableBase: 10_000,
    freightBase: 10_000,
    exemptAmount: 500,
    vatDeclared: 1600,
    vatExpected: 1600,
    retentionDeclared: 400,
    retentionExpected: 400,
    total: 11_700,
    hasDiscrepancy: false,
  });
  t.same(codes(r.findings), ['info:EXEMPT_EXCLUDED']);
  t.match(r.findings[0], { conceptIndex: 1, declared: 500, expected: 500, difference: 0, docId: doc.id, uuid: doc.invoice.uuid });
});

t.test('persona física client: expected retention 0', async (t) => {
  const clean = reconcileDocument(makeFinancialDoc({ client: CLIENT_PERSON, concepts: [freight(10_000)] }), settings);
  t.match(clean, { clientKind: 'person', freightBase: 10_000, retentionDeclared: 0, retentionExpected: 0, vatExpected: 1600, total: 11_600 });
  t.same(clean.findings, []);

  // Retention wrongly declared on a person: warning, not a discrepancy (the arithmetic still adds up).
  const doc = makeFinancialDoc({ client: CLIENT_PERSON, concepts: [freight(10_000, { retentionRate: 0.04, retention: 400 })] });
  t.equal(doc.iTot, 11_200);
  const r = reconcileDocument(doc, settings);
  t.same(codes(r.findings), ['warning:RETENTION_UNEXPECTED']);
  t.match(r.findings[0], { declared: 400, expected: 0, difference: 400 });
  t.equal(r.retentionExpected, 0);
  t.equal(r.hasDiscrepancy, false);
});

t.test('public RFC behaves like a person', async (t) => {
  const r = reconcileDocument(makeFinancialDoc({ client: PUBLIC_RFC, concepts: [freight(1000, { retentionRate: 0.04, retention: 40 })] }), settings);
  t.equal(r.clientKind, 'public');
  t.same(codes(r.findings), ['warning:RETENTION_UNEXPECTED']);
});

t.test('a real VAT mismatch is flagged on its concept', async (t) => {
  // VAT declared 1,500 instead of 1,600; the document is internally consistent (Total 11,100).
  const doc = makeFinancialDoc({ concepts: [freight(10_000, { vat: 1500 })] });
  t.equal(doc.iTot, 11_100);
  const r = reconcileDocument(doc, settings);
  t.same(codes(r.findings), ['discrepancy:VAT_MISMATCH']);
  t.match(r.findings[0], { conceptIndex: 0, declared: 1500, expected: 1600, difference: -100 });
  t.equal(r.hasDiscrepancy, true);
});

t.test('tolerance: 0.01 not flagged, 0.02 flagged', async (t) => {
  const off1 = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000, { vat: 1600.01 })] }), settings);
  t.same(discrepancies(off1.findings), []);
  const off2 = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000, { vat: 1600.02 })] }), settings);
  t.same(codes(off2.findings), ['discrepancy:VAT_MISMATCH']);
  t.equal(off2.findings[0]!.difference, 0.02);
  const ret = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000, { retention: 399.99 })] }), settings);
  t.same(ret.findings, [], 'retention 0.01 off is fine');
  const strict = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000, { vat: 1600.01 })] }), { ...settings, discrepancyTolerance: 0 });
  t.same(codes(strict.findings), ['discrepancy:VAT_MISMATCH'], 'tolerance is configurable');
});

t.test('retention findings for a company client', async (t) => {
  const wrong = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000, { retention: 300 })] }), settings);
  t.same(codes(wrong.findings), ['discrepancy:RETENTION_MISMATCH']);
  t.match(wrong.findings[0], { declared: 300, expected: 400, difference: -100, conceptIndex: 0 });

  const missing = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000, { retentionRate: 0, retention: 0 })] }), settings);
  t.same(codes(missing.findings), ['warning:RETENTION_MISSING']);
  t.match(missing.findings[0], { declared: 0, expected: 400 });
  t.equal(missing.retentionExpected, 400);
  t.equal(missing.retentionDeclared, 0);

  // One freight line retained, the other not: per-line warning.
  const partial = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000), freight(5000, { retentionRate: 0, retention: 0 })] }), settings);
  t.same(codes(partial.findings), ['warning:FREIGHT_WITHOUT_RETENTION']);
  t.match(partial.findings[0], { conceptIndex: 1, expected: 200 });
  t.equal(partial.retentionExpected, 600);
});

t.test('accessorials: taxable; their 4 % accepted when present', async (t) => {
  // Freight 10,000 + demurrage 1,000: taxable 11,000, VAT 1,760, retention 400 on freight only.
  const plain = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000), demurrage(1000)] }), settings);
  t.match(plain, { taxableBase: 11_000, freightBase: 10_000, vatExpected: 1760, retentionExpected: 400 });
  t.same(plain.findings, []);
  const withRet = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000), demurrage(1000, { retentionRate: 0.04, retention: 40 })] }), settings);
  t.same(codes(withRet.findings), ['info:ACCESSORIAL_RETENTION']);
  t.match(withRet, { retentionDeclared: 440, retentionExpected: 440, accessorialRetention: 40, hasDiscrepancy: false });
  const badRet = reconcileDocument(makeFinancialDoc({ concepts: [demurrage(1000, { retention: 45 })] }), settings);
  t.same(codes(badRet.findings), ['discrepancy:RETENTION_MISMATCH']);
});

t.test('discounts reduce the concept base', async (t) => {
  // base 9,000: VAT 1,440, retention 360, Total 10,000 − 1,000 + 1,440 − 360 = 10,080.
  const doc = makeFinancialDoc({ concepts: [freight(10_000, { discount: 1000 })] });
  t.equal(doc.iTot, 10_080);
  const r = reconcileDocument(doc, settings);
  t.match(r, { discount: 1000, freightBase: 9000, taxableBase: 9000, vatExpected: 1440, retentionExpected: 360 });
  t.same(r.findings, []);
});

t.test('VAT rates: 8 % border rate and 0 % valid, others not', async (t) => {
  const border = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000, { vatRate: 0.08 })] }), settings);
  t.equal(border.vatExpected, 800);
  t.same(border.findings, []);
  const bad = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000, { vatRate: 0.1 })] }), settings);
  t.same(codes(bad.findings), ['discrepancy:INVALID_VAT_RATE']);
  t.match(bad.findings[0], { declared: 1000, expected: 1600, difference: -600 });
  // 0 % is legal (LIVA art. 29: the Mexican leg of international freight, exported services): no finding,
  // and no VAT charged means none retained (LIVA art. 1-A).
  const zero = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000, { vatRate: 0, retentionRate: 0, retention: 0 })] }), settings);
  t.same(zero.findings, [], 'IVA 0 % is a legal rate');
  t.match(zero, { vatExpected: 0, taxLinesC: { vatBases: { rate0: 1_000_000, rate16: 0 } } });
});

t.test('document-level arithmetic', async (t) => {
  const total = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000)], iTot: 11_300 }), settings);
  t.same(codes(total.findings), ['discrepancy:TOTAL_MISMATCH']);
  t.match(total.findings[0], { declared: 11_300, expected: 11_200, difference: 100 });
  t.notOk('conceptIndex' in total.findings[0]!, 'document-level finding has no conceptIndex');

  // Header VAT 1,700 vs Σ concepts 1,600; Total computed from the header so it adds up.
  const vatSum = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000)], iTax1: 1700 }), settings);
  t.same(codes(vatSum.findings), ['discrepancy:VAT_SUM_MISMATCH']);
  const retSum = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000)], iTax2: 0 }), settings);
  t.same(codes(retSum.findings), ['discrepancy:RETENTION_SUM_MISMATCH']);
  const sub = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000)], iSub: 10_500, iTot: 11_200 }), settings);
  t.same(codes(sub.findings), ['discrepancy:SUBTOTAL_MISMATCH', 'discrepancy:TOTAL_MISMATCH']);
  const exemptVat = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000), shortage(500, { vat: 80 })] }), settings);
  t.same(codes(exemptVat.findings), ['info:EXEMPT_EXCLUDED', 'discrepancy:VAT_MISMATCH']);
  t.match(exemptVat.findings[1], { conceptIndex: 1, declared: 80, expected: 0 });
});

t.test('freight classification', async (t) => {
  t.ok(isFreightConcept({ kind: 'freight', code: '01010101' }));
  t.ok(isFreightConcept({ kind: 'other', code: '78101807' }), 'unclassified line under a 781018xx key');
  t.notOk(isFreightConcept({ kind: 'other', code: '78111800' }));
  t.notOk(isFreightConcept({ kind: 'shortage', code: '78101802' }), 'explicit kind wins over the key');
  t.notOk(isFreightConcept({ kind: 'demurrage', code: '78101802' }));
  const r = reconcileDocument(makeFinancialDoc({ concepts: [{ kind: 'other', code: '78101802', amount: 1000 }] }), settings);
  t.equal(r.freightBase, 1000);
  t.equal(r.retentionExpected, 40);
});

t.test('malformed client RFC: warned, retention not judged', async (t) => {
  const r = reconcileDocument(makeFinancialDoc({ client: 'BAD-RFC', concepts: [freight(1000, { retentionRate: 0.04, retention: 40 })] }), settings);
  t.equal(r.clientKind, 'unknown');
  t.same(codes(r.findings), ['warning:INVALID_CLIENT_RFC']);
  t.equal(r.retentionExpected, 40);
});

t.test('cancelled document: no tax, one info finding', async (t) => {
  const r = reconcileDocument(
    makeFinancialDoc({ concepts: [freight(2000, { vat: 1 })], cancelled: { motive: '01', replacementUuid: 'b0000000-0000-4000-8000-000000000001' } }),
    settings,
  );
  t.match(r, {
    cancelled: true,
    cancellationMotive: '01',
    replacementUuid: 'b0000000-0000-4000-8000-000000000001',
    vatExpected: 0,
    retentionExpected: 0,
    hasDiscrepancy: false,
  });
  t.same(codes(r.findings), ['info:DOCUMENT_CANCELLED']);
});

t.test('legacy document without concepts: header-based check', async (t) => {
  const doc = makeFinancialDoc({ concepts: [freight(10_000), shortage(500)] });
  doc.invoice.concepts = [];
  const r = reconcileDocument(doc, settings);
  t.match(r, { freightBase: 10_000, exemptAmount: 500, taxableBase: 10_000, vatExpected: 1600, retentionExpected: 400 });
  t.same(codes(r.findings), ['warning:NO_CONCEPTS', 'info:EXEMPT_EXCLUDED']);
});

t.test('aggregates per month and client, cancelled counted apart', async (t) => {
  const docs = [
    // 23:30 on Mar 31 in Mexico City is 05:30Z on Apr 1: still March.
    makeFinancialDoc({ client: CLIENT_COMPANY, date: '2026-03-31T23:30', concepts: [freight(10_000), shortage(500)] }), // total 11,700
    makeFinancialDoc({ client: CLIENT_PERSON, date: '2026-03-15T12:00', concepts: [freight(5000)] }), // total 5,800
    makeFinancialDoc({ client: CLIENT_COMPANY, date: '2026-03-20T12:00', concepts: [freight(2000)], cancelled: true }), // total 2,240
    makeFinancialDoc({ client: CLIENT_COMPANY, date: '2026-04-01T00:00', concepts: [freight(1000)] }), // total 1,120
    makeFinancialDoc({ client: CLIENT_COMPANY_2, date: '2026-04-10T09:00', concepts: [freight(1000.1, { vat: 160.02 })] }), // VAT 160.02 (exp. 160.02 = round2(160.016))
  ];
  const results = docs.map((d) => reconcileDocument(d, settings));
  const months = aggregateReconciliations(results, byMonth);
  t.same(
    months.map((m) => m.key),
    ['2026-03', '2026-04'],
  );
  t.match(months[0], {
    documents: 2,
    cancelledDocuments: 1,
    cancelledTotal: 2240,
    subtotal: 15_500,
    taxableBase: 15_000,
    freightBase: 15_000,
    exemptAmount: 500,
    vatDeclared: 2400,
    vatExpected: 2400,
    vatDifference: 0,
    retentionDeclared: 400,
    retentionExpected: 400,
    retentionDifference: 0,
    total: 17_500,
    discrepancies: 0,
    warnings: 0,
    infos: 1,
    documentsWithDiscrepancies: 0,
  });
  // April: 1,000 + 1,000.10 subtotal; VAT 160 + 160.02; retention 40 + 40 (round2(40.004)).
  t.match(months[1], {
    documents: 2,
    cancelledDocuments: 0,
    subtotal: 2000.1,
    vatDeclared: 320.02,
    vatExpected: 320.02,
    retentionExpected: 80,
    total: 2240.12,
  });

  const clients = aggregateReconciliations(results, byClient);
  const c1 = clients.find((c) => c.key === CLIENT_COMPANY);
  t.match(c1, { documents: 2, cancelledDocuments: 1, total: 12_820 });
  t.equal(clients.length, 3);
  t.same(aggregateReconciliations([], byMonth), []);
});

t.test('cash basis: partially paid PPD invoice', async (t) => {
  // Total 11,200 = 10,000 + VAT 1,600 − retention 400.
  const doc = makeFinancialDoc({
    date: '2026-03-10T10:00',
    paymentMethod: 'PPD',
    concepts: [freight(10_000)],
    payments: [
      payment(3000, '2026-04-10T12:00'),
      payment(999, '2026-04-11T12:00', { canceled: true }),
      creditNote(500, '2026-04-12T12:00'),
      payment(2600, '2026-05-05T12:00'),
    ],
  });
  // 3,000 / 11,200 = 0.267857…: VAT 1,600 × that = 428.571… → 428.57; retention 400 × that = 107.142… → 107.14.
  const april = cashBasisForPeriod(doc, mxMonthRange('2026-04'));
  t.match(april, { paidInPeriod: 3000, paymentsCount: 1, share: 0.267857, vat: 428.57, retention: 107.14 });
  // 2,600 / 11,200: VAT 371.428… → 371.43; retention 92.857… → 92.86.
  t.match(cashBasisForPeriod(doc, mxMonthRange('2026-05')), { paidInPeriod: 2600, vat: 371.43, retention: 92.86 });
  t.match(cashBasisForPeriod(doc, mxMonthRange('2026-03')), { paidInPeriod: 0, share: 0, vat: 0, retention: 0 });
  // Half paid: exactly half the taxes.
  const half = cashBasisShare(doc, [{ ...doc.payments[0]!, amount: 5600 }]);
  t.match(half, { share: 0.5, vat: 800, retention: 200 });
  t.match(cashBasisShare(doc, doc.payments), { paidInPeriod: 5600, paymentsCount: 2 }, 'cancelled payment and credit note excluded');
});

t.test('cash basis: PUE, overpayment cap, cancelled', async (t) => {
  const pue = makeFinancialDoc({ date: '2026-03-10T10:00', paymentMethod: 'PUE', concepts: [freight(10_000)] });
  t.match(cashBasisForPeriod(pue, mxMonthRange('2026-03')), { share: 1, vat: 1600, retention: 400 });
  t.match(cashBasisForPeriod(pue, mxMonthRange('2026-04')), { share: 0, vat: 0 });
  const over = makeFinancialDoc({ paymentMethod: 'PPD', concepts: [freight(10_000)], payments: [payment(11_200, '2026-04-10'), payment(100, '2026-05-10')] });
  t.match(cashBasisForPeriod(over, mxMonthRange('2026-04')), { share: 1, vat: 1600 });
  t.match(cashBasisForPeriod(over, mxMonthRange('2026-05')), { paidInPeriod: 100, share: 0, vat: 0 }, 'beyond the Total carries no tax');
  const cancelled = makeFinancialDoc({ concepts: [freight(10_000)], cancelled: true, payments: [payment(5600, '2026-04-10')] });
  t.match(cashBasisForPeriod(cancelled, mxMonthRange('2026-04')), { share: 0, vat: 0, reason: /cancelled/ });
});

// ---------------------------------------------------------------------------
// Every CFDI tax (issue 20): legal rates are information, arithmetic stays a discrepancy.

const line = (tax: 'IVA' | 'ISR' | 'IEPS', rate: number | null, base: number, amount?: number, factor: 'Tasa' | 'Cuota' | 'Exento' = 'Tasa') => ({
  tax,
  factor,
  rate,
  base,
  amount: amount ?? (rate === null ? 0 : Math.round(base * rate * 100) / 100),
});

t.test('RESICO carrier: 4% IVA and 1.25% ISR retained on freight to a company: info, no discrepancy', async (t) => {
  // 10,000 + 1,600 − 400 − 125 = 11,075.
  const doc = makeFinancialDoc({
    concepts: [freight(10_000, { taxes: { transfers: [line('IVA', 0.16, 10_000)], retentions: [line('IVA', 0.04, 10_000), line('ISR', 0.0125, 10_000)] } })],
  });
  t.equal(doc.iTot, 11_075);
  const r = reconcileDocument(doc, settings);
  t.same(codes(r.findings), ['info:ISR_RETAINED']);
  t.match(r, { retentionDeclared: 400, retentionExpected: 400, hasDiscrepancy: false, taxLinesC: { isrRetained: 12_500, retained: 52_500 } });
});

t.test('a persona física billing services: IVA retained at two thirds and ISR at 10%: info', async (t) => {
  // Consulting 25,000: IVA 4,000, IVA ret 2,666.67 (0.106667), ISR ret 2,500 → 23,833.33.
  const doc = makeFinancialDoc({
    concepts: [
      {
        kind: 'other',
        code: '80101500',
        amount: 25_000,
        taxes: { transfers: [line('IVA', 0.16, 25_000)], retentions: [line('IVA', 0.106667, 25_000, 2_666.67), line('ISR', 0.1, 25_000)] },
      },
    ],
  });
  t.equal(doc.iTot, 23_833.33);
  const r = reconcileDocument(doc, settings);
  t.same(codes(r.findings), ['info:RETENTION_AT_LEGAL_RATE', 'info:ISR_RETAINED']);
  t.match(r, { retentionDeclared: 2_666.67, retentionExpected: 2_666.67, hasDiscrepancy: false });
});

t.test('a retention at a rate no rule sets is a warning; an amount off its base × rate a discrepancy', async (t) => {
  const odd = reconcileDocument(
    makeFinancialDoc({
      concepts: [
        {
          kind: 'other',
          code: '80101500',
          amount: 25_000,
          taxes: { transfers: [line('IVA', 0.16, 25_000)], retentions: [line('IVA', 0.006667, 25_000, 166.67), line('ISR', 0.3, 25_000)] },
        },
      ],
    }),
    settings,
  );
  t.same(codes(odd.findings), ['warning:RETENTION_RATE_UNUSUAL', 'warning:RETENTION_RATE_UNUSUAL']);
  t.equal(odd.hasDiscrepancy, false, '166.67 is within the tolerance of 25,000 × 0.006667 = 166.675');
  const off = reconcileDocument(
    makeFinancialDoc({
      concepts: [
        freight(10_000, { taxes: { transfers: [line('IVA', 0.16, 10_000)], retentions: [line('IVA', 0.04, 10_000), line('ISR', 0.0125, 10_000, 100)] } }),
      ],
    }),
    settings,
  );
  t.same(codes(off.findings), ['discrepancy:TAX_MISMATCH']);
  t.match(off.findings[0], { conceptIndex: 0, declared: 100, expected: 125, difference: -25 });
  const freightAtTwoThirds = reconcileDocument(
    makeFinancialDoc({ concepts: [freight(10_000, { taxes: { transfers: [line('IVA', 0.16, 10_000)], retentions: [line('IVA', 0.106667, 10_000)] } })] }),
    settings,
  );
  t.same(codes(freightAtTwoThirds.findings), ['warning:RETENTION_RATE_UNUSUAL'], 'road freight retains 4%, whoever the carrier (RLIVA art. 3 fr. II)');
  t.match(freightAtTwoThirds, { retentionDeclared: 1_066.67, retentionExpected: 400, hasDiscrepancy: false });
});

t.test('IVA 0%, exempt and IEPS lines: bases apart, no discrepancy; a subject line without IVA a warning', async (t) => {
  const doc = makeFinancialDoc({
    client: CLIENT_PERSON,
    concepts: [
      freight(2_000, { taxes: { transfers: [line('IVA', 0, 2_000)], retentions: [] } }),
      { kind: 'other', code: '84131501', amount: 300, taxes: { transfers: [line('IVA', null, 300, 0, 'Exento')], retentions: [] } },
      { kind: 'other', code: '15101505', amount: 500, taxes: { transfers: [line('IEPS', 0.5, 100, 50, 'Cuota'), line('IVA', 0.16, 550)], retentions: [] } },
      { kind: 'other', code: '10101702', amount: 1_000, taxes: { transfers: [line('IEPS', null, 1_000, 0, 'Exento')], retentions: [] } },
    ],
  });
  t.equal(doc.iTot, 3_938, '3,800 + 0 + 50 + 88');
  const r = reconcileDocument(doc, settings);
  t.same(codes(r.findings), ['warning:SUBJECT_WITHOUT_VAT']);
  t.match(r, {
    taxableBase: 3_800,
    vatDeclared: 88,
    vatExpected: 88,
    hasDiscrepancy: false,
    taxLinesC: { vatBases: { rate0: 200_000, exempt: 30_000, rate16: 55_000 }, iepsTransferred: 5_000 },
  });
});

t.test('the Total over every tax, and the CFDI header against its lines', async (t) => {
  const taxes = { transfers: [line('IVA', 0.16, 10_000)], retentions: [line('IVA', 0.04, 10_000), line('ISR', 0.0125, 10_000)] };
  const wrongTotal = reconcileDocument(makeFinancialDoc({ iTot: 11_200, concepts: [freight(10_000, { taxes })] }), settings);
  t.same(codes(wrongTotal.findings), ['info:ISR_RETAINED', 'discrepancy:TOTAL_MISMATCH'], 'a Total that forgets the ISR retained');
  t.match(wrongTotal.findings[1], { declared: 11_200, expected: 11_075 });
  const header = reconcileDocument(
    makeFinancialDoc({ taxTotals: { transferred: 1_600, retained: 400 }, iTot: 11_200, concepts: [freight(10_000, { taxes })] }),
    settings,
  );
  t.same(codes(header.findings), ['info:ISR_RETAINED', 'discrepancy:TAX_TOTAL_MISMATCH'], 'the header forgets the ISR: its Total adds up with it');
});

t.test('a pending or rejected cancellation counts in full, with an info finding; an expired one is cancelled', async (t) => {
  const pending = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000)], cancelled: { status: 'pending' } }), settings);
  t.match(pending, { cancelled: false, cancellationStatus: 'pending', vatExpected: 1_600, retentionExpected: 400 });
  t.same(codes(pending.findings), ['info:CANCELLATION_PENDING']);
  const rejected = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000)], cancelled: { status: 'rejected' } }), settings);
  t.same(codes(rejected.findings), ['info:CANCELLATION_REJECTED']);
  const expired = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000)], cancelled: { status: 'expired' } }), settings);
  t.match(expired, { cancelled: true, cancellationStatus: 'expired', vatExpected: 0 });
  t.same(codes(expired.findings), ['info:DOCUMENT_CANCELLED']);
  t.match(expired.findings[0]!.message, /tacitly accepted/);
});

t.test('another currency: reconciled in it, its rate carried for the totals', async (t) => {
  const r = reconcileDocument(
    makeFinancialDoc({
      currency: 'USD',
      exchangeRate: 17.25,
      client: 'XEXX010101000',
      concepts: [freight(2_000, { taxes: { transfers: [line('IVA', 0, 2_000)], retentions: [] } })],
    }),
    settings,
  );
  t.match(r, { currency: 'USD', exchangeRate: 17.25, total: 2_000, clientKind: 'public', hasDiscrepancy: false });
  t.same(r.findings, []);
});

t.test('freight at IVA 0% or exempt to a company: no VAT charged, so no retention expected; one declared is a discrepancy', async (t) => {
  // Cross-border freight 10,000 at 0% (LIVA art. 29): Total 10,000, nothing to retain (LIVA art. 1-A retains the VAT charged).
  const zero = reconcileDocument(
    makeFinancialDoc({ concepts: [freight(10_000, { taxes: { transfers: [line('IVA', 0, 10_000)], retentions: [] } })] }),
    settings,
  );
  t.equal(zero.findings.length, 0, 'no RETENTION_MISSING on 0% freight');
  t.match(zero, { retentionExpected: 0, retentionDeclared: 0, hasDiscrepancy: false });
  const exempt = reconcileDocument(
    makeFinancialDoc({ concepts: [freight(10_000, { taxes: { transfers: [line('IVA', null, 10_000, 0, 'Exento')], retentions: [] } })] }),
    settings,
  );
  t.same(codes(exempt.findings), [], 'nor on exempt freight');
  // 10,000 at 0% with 400 retained anyway: Total 9,600; 400 retained of a VAT of 0.
  const retained = reconcileDocument(
    makeFinancialDoc({ concepts: [freight(10_000, { taxes: { transfers: [line('IVA', 0, 10_000)], retentions: [line('IVA', 0.04, 10_000)] } })] }),
    settings,
  );
  t.same(codes(retained.findings), ['discrepancy:RETENTION_MISMATCH']);
  t.match(retained.findings[0], { conceptIndex: 0, declared: 400, expected: 0 });
  // The same freight at 16% still expects its 4%: 10,000 × 0.04 = 400.
  const taxed = reconcileDocument(makeFinancialDoc({ concepts: [freight(10_000, { retentionRate: 0, retention: 0 })] }), settings);
  t.same(codes(taxed.findings), ['warning:RETENTION_MISSING']);
});

t.test('lines of 6 decimals: the header states the rounded sum of each group (Anexo 20), not the sum of rounded lines', async (t) => {
  // 5 × freight 1,000.03: IVA 160.004800 (160.00 rounded alone), retained 40.001200 (40.00). The CFDI states
  // IVA 5 × 160.0048 = 800.024 → 800.02 and retained 5 × 40.0012 = 200.006 → 200.01 (the lines rounded first: 800.00
  // and 200.00, 2 and 1 cents short); Total = 5,000.15 + 800.02 − 200.01 = 5,600.16.
  const taxes = { transfers: [line('IVA', 0.16, 1_000.03, 160.0048)], retentions: [line('IVA', 0.04, 1_000.03, 40.0012)] };
  const concepts = Array.from({ length: 5 }, () => freight(1_000.03, { vat: 160, retention: 40, taxes }));
  const doc = makeFinancialDoc({ iTax1: 800.02, iTax2: 200.01, iTot: 5_600.16, taxTotals: { transferred: 800.02, retained: 200.01 }, concepts });
  const r = reconcileDocument(doc, settings);
  t.same(discrepancies(r.findings), [], 'no VAT_SUM_MISMATCH, RETENTION_SUM_MISMATCH or TAX_TOTAL_MISMATCH');
  t.match(r, {
    vatDeclared: 800.02,
    retentionDeclared: 200.01,
    hasDiscrepancy: false,
    taxLinesC: { vatTransferred: 80_002, vatRetained: 20_001, transferred: 80_002, retained: 20_001, vatBases: { rate16: 500_015 } },
  });
  // The header the lines rounded first would give is 2 cents off the document's own lines: a discrepancy.
  const rounded = reconcileDocument(
    makeFinancialDoc({ iTax1: 800, iTax2: 200, iTot: 5_600.15, taxTotals: { transferred: 800, retained: 200 }, concepts }),
    settings,
  );
  t.same(
    discrepancies(rounded.findings).map((f) => [f.code, f.declared, f.expected]),
    [
      ['VAT_SUM_MISMATCH', 800, 800.02],
      ['TAX_TOTAL_MISMATCH', 800, 800.02],
    ],
  );
});

t.test('concepts of 6 decimals: SubTotal and Descuento are the rounded sums of their Importe and Descuento (Anexo 20)', async (t) => {
  // 5 × Importe 10.333333 = 51.666665 → SubTotal 51.67 (each rounded first: 5 × 10.33 = 51.65, 2 cents short);
  // 5 × Descuento 0.113333 = 0.566665 → 0.57 (first rounded: 0.55); not subject to tax: Total = 51.67 − 0.57 = 51.10.
  const concepts = Array.from({ length: 5 }, () => shortage(10.333333, { discount: 0.113333 }));
  const doc = makeFinancialDoc({ iSub: 51.67, iDesc: 0.57, iTot: 51.1, concepts });
  t.same(discrepancies(reconcileDocument(doc, settings).findings), [], 'no SUBTOTAL_MISMATCH or DISCOUNT_MISMATCH');
  const rounded = reconcileDocument(makeFinancialDoc({ iSub: 51.65, iDesc: 0.55, iTot: 51.1, concepts }), settings);
  t.same(
    discrepancies(rounded.findings).map((f) => [f.code, f.declared, f.expected]),
    [
      ['SUBTOTAL_MISMATCH', 51.65, 51.67],
      ['DISCOUNT_MISMATCH', 0.55, 0.57],
    ],
    'the header of the lines rounded first is 2 cents off',
  );
});
