/**
 * The pure rules of the month's tax position and the DIOT (lib/tax/tax-position.ts, diot.ts),
 * against hand-computed values (docs/domain.md, "The month's tax position", "DIOT").
 */
import t from 'tap';
import { buildReceivedDocument } from '../../lib/received/received-document.ts';
import type { ReceivedCreditNoteFact, ReceivedInvoiceFact, ReceivedPaymentFact } from '../../lib/received/received-rows.ts';
import type { TaxLine } from '../../lib/model/financial-document.ts';
import { collectionLine, issuedLines, nonCreditableReason, partOfRunningC, paymentLines, positionFigures, proportionC } from '../../lib/tax/tax-position.ts';
import { diotCsv, diotRows, documentCountingLines, foreignSupplierKey, operationTypeOf, thirdPartyTypeOf } from '../../lib/tax/diot.ts';
import { retentionDueDate } from '../../lib/tax/get-tax-position.ts';
import { rankRanges, rollUpTaxPositionDay, rollUpTaxPositionMonth } from '../../lib/tax/tax-position-rollup.ts';
import { mxMonthRange, mxWallTimeToEpoch } from '../../lib/time/mexico-city.ts';
import { cashBasisForPeriod } from '../../lib/tax/cash-basis.ts';
import { paymentBasisContributions } from '../../lib/tax/tax-totals.ts';
import { reconcileDocument } from '../../lib/tax/reconcile.ts';
import { DEFAULT_SETTINGS } from '../../lib/model/tenant-settings.ts';
import { CLIENT_COMPANY, creditNote, freight, makeFinancialDoc, payment, paymentCancellation } from '../fixtures/documents.ts';

const OCT = { month: '2026-10', ...mxMonthRange('2026-10') };
const at = (d: number, h = 12): number => mxWallTimeToEpoch(2026, 10, d, h);
const iva = (base: number, rate: number): TaxLine => ({ tax: 'IVA', factor: 'Tasa', rate, base, amount: Math.round(base * rate * 100) / 100 });

function invoice(
  over: Partial<ReceivedInvoiceFact> & { lines: { code: string; base: number; transfers?: TaxLine[]; retentions?: TaxLine[] }[] },
): ReceivedInvoiceFact {
  const { lines, ...rest } = over;
  const concepts = lines.map((l) => ({
    code: l.code,
    description: 'x',
    quantity: 1,
    unit: 'E48',
    unitPrice: l.base,
    amount: l.base,
    discount: 0,
    transfers: l.transfers ?? [iva(l.base, 0.16)],
    retentions: l.retentions ?? [],
  }));
  const sub = lines.reduce((s, l) => s + l.base, 0);
  const tr = concepts.flatMap((c) => c.transfers).reduce((s, x) => s + x.amount, 0);
  const re = concepts.flatMap((c) => c.retentions).reduce((s, x) => s + x.amount, 0);
  return {
    kind: 'invoice',
    uuid: 'U-1',
    certifiedAt: at(1),
    supplier: { rfc: 'SUP010101AB1', name: 'SUPPLIER' },
    serie: '',
    folio: '',
    date: at(2),
    currency: 'MXN',
    exchangeRate: 1,
    paymentMethod: 'PUE',
    paymentForm: '03',
    use: 'G03',
    subTotal: sub,
    discount: 0,
    total: Math.round((sub + tr - re) * 100) / 100,
    concepts,
    ...rest,
  };
}
const build = (inv: ReceivedInvoiceFact, payments: ReceivedPaymentFact[] = []) => buildReceivedDocument('TGO850101AB1', inv, payments, [], new Map(), []);
const pay = (uuid: string, invoiceUuid: string, date: number, amount: number, before: number, form = '03'): ReceivedPaymentFact => ({
  kind: 'payment',
  uuid,
  records: [{ invoiceUuid, seq: 1, date, amount, balanceBefore: before, balanceAfter: Math.round((before - amount) * 100) / 100, form }],
});

t.test('proportionC: round(x × num ÷ den) half away from zero, exact in integers', async (t) => {
  t.equal(proportionC(160_000, 464_000, 1_160_000), 64_000, '1,600.00 × 4,640 ÷ 11,600 = 640.00');
  t.equal(proportionC(1, 1, 2), 1, '0.5 cent rounds up');
  t.equal(proportionC(-1, 1, 2), -1, 'and away from zero when negative');
  t.equal(proportionC(100, 1, 3), 33);
  t.equal(proportionC(5, 7, 0), 0, 'no Total, no proportion');
  // 9e13 cents × 9e13 cents overflows 2^53 in floats; the result is still exact.
  t.equal(proportionC(90_000_000_000_000, 90_000_000_000_000, 90_000_000_000_000), 90_000_000_000_000);
});

t.test('a PPD received invoice paid in two parts: VAT in proportion paid ÷ Total', async (t) => {
  // 10,000.00 + IVA 1,600.00 = 11,600.00; 4,640.00 on the 10th (0.4), 6,960.00 on the 25th (0.6).
  const doc = build(invoice({ uuid: 'PPD-1', paymentMethod: 'PPD', lines: [{ code: '78181500', base: 10_000 }] }), [
    pay('P-1', 'PPD-1', at(10), 4_640, 11_600),
    pay('P-2', 'PPD-1', at(25), 6_960, 6_960),
  ]);
  const lines = paymentLines(doc, OCT);
  t.same(
    lines.map((l) => [l.paymentUuid, l.paidC, l.share, l.basesC.rate16, l.vatC, l.nonCreditable]),
    [
      ['P-1', 464_000, 0.4, 400_000, 64_000, null],
      ['P-2', 696_000, 0.6, 600_000, 96_000, null],
    ],
  );
  t.same(
    paymentLines(doc, { start: at(11), endExclusive: at(26) }).map((l) => l.paymentUuid),
    ['P-2'],
    'only the settlements dated in the period',
  );
});

const note = (uuid: string, invoiceUuid: string, date: number, amount: number): ReceivedCreditNoteFact => ({
  kind: 'creditNote',
  uuid,
  invoiceUuid,
  date,
  amount,
});
const withNotes = (inv: ReceivedInvoiceFact, payments: ReceivedPaymentFact[], notes: ReceivedCreditNoteFact[]) =>
  buildReceivedDocument('TGO850101AB1', inv, payments, notes, new Map(), []);

t.test('what is paid beyond the Total carries no VAT, over every payment together', async (t) => {
  // 10,000.00 + 1,600.00 = 11,600.00 paid twice in full (two complements): the second carries nothing.
  const doc = build(invoice({ uuid: 'PPD-2', paymentMethod: 'PPD', lines: [{ code: '78181500', base: 10_000 }] }), [
    pay('P-1', 'PPD-2', at(10), 11_600, 11_600),
    pay('P-2', 'PPD-2', at(12), 11_600, 11_600),
  ]);
  t.same(
    paymentLines(doc, OCT).map((l) => [l.paymentUuid, l.paidC, l.share, l.vatC]),
    [
      ['P-1', 1_160_000, 1, 160_000],
      ['P-2', 0, 0, 0],
    ],
  );
});

t.test("a supplier's credit note reduces the creditable VAT by what it gives back of what was paid (LIVA art. 7)", async (t) => {
  const maintenance = (uuid: string, method: 'PUE' | 'PPD') => invoice({ uuid, paymentMethod: method, lines: [{ code: '78181500', base: 10_000 }] });
  // PUE 11,600.00 (paid at its date, 1,600.00 credited); a note of 1,160.00 on the 20th gives back 1,160.00: VAT 160.00.
  const pue = withNotes(maintenance('PUE-1', 'PUE'), [], [note('NC-1', 'PUE-1', at(20), 1_160)]);
  const pueLines = paymentLines(pue, OCT);
  t.same(
    pueLines.map((l) => [l.kind, l.refundC, l.refundShare, l.restitutedVatC, l.returnsC]),
    [
      ['pue', 0, 0, 0, 0],
      ['creditNote', 116_000, 0.1, 16_000, 100_000],
    ],
  );
  const f = positionFigures([], pueLines, []);
  t.same(
    f.lines.creditableVat.map((l) => [l.settlement, l.paymentUuid, l.paidC, l.share, l.amountC]),
    [
      ['pue', null, 1_160_000, 1, 160_000],
      ['creditNote', 'NC-1', 116_000, 0.1, -16_000],
    ],
  );
  t.equal(f.totalsC.creditableVat, 144_000, '1,600.00 − 160.00');
  t.equal(f.vatPayableC, -144_000);

  // PPD: 5,800.00 paid on the 5th (VAT 800.00); the note of 1,160.00 on the 8th closes part of the 5,800.00 still
  // open: no VAT was paid on it, nothing is given back; the rest, 4,640.00 on the 15th, carries 640.00. Credited
  // 800 + 640 = 1,440.00 = 1,600.00 × (11,600 − 1,160) ÷ 11,600.
  const partial = withNotes(
    maintenance('PPD-3', 'PPD'),
    [pay('P-3', 'PPD-3', at(5), 5_800, 11_600), pay('P-4', 'PPD-3', at(15), 4_640, 4_640)],
    [note('NC-2', 'PPD-3', at(8), 1_160)],
  );
  const partialLines = paymentLines(partial, OCT);
  t.same(
    partialLines.map((l) => [l.kind, l.vatC, l.restitutedVatC]),
    [
      ['payment', 80_000, 0],
      ['creditNote', 0, 0],
      ['payment', 64_000, 0],
    ],
  );
  t.equal(positionFigures([], partialLines, []).totalsC.creditableVat, 144_000);

  // PPD paid 11,600.00 in full, then a complement of 1,160.00 more (beyond the Total: nothing), then a note of
  // 2,320.00: all of it gives back what was paid: VAT 320.00.
  const paidThenNote = withNotes(
    maintenance('PPD-4', 'PPD'),
    [pay('P-5', 'PPD-4', at(5), 11_600, 11_600), pay('P-6', 'PPD-4', at(6), 1_160, 1_160)],
    [note('NC-3', 'PPD-4', at(9), 2_320)],
  );
  t.same(
    paymentLines(paidThenNote, OCT).map((l) => [l.kind, l.vatC, l.restitutedVatC]),
    [
      ['payment', 160_000, 0],
      ['payment', 0, 0],
      ['creditNote', 0, 32_000],
    ],
  );

  // Freight another carrier hauled, 12,500.00 + 2,000.00 − 500.00 retained = 14,000.00 PUE: 1,500.00 credited (the
  // 500.00 retained is next month's credit). A note of 1,400.00 (0.1) gives back 200.00 − 50.00 = 150.00.
  const freightIn = withNotes(
    invoice({
      uuid: 'PUE-2',
      lines: [{ code: '78101802', base: 12_500, retentions: [{ tax: 'IVA', factor: 'Tasa', rate: 0.04, base: 12_500, amount: 500 }] }],
    }),
    [],
    [note('NC-4', 'PUE-2', at(20), 1_400)],
  );
  const freightLines = paymentLines(freightIn, OCT);
  t.same(
    freightLines.map((l) => [l.kind, l.restitutedVatC]),
    [
      ['pue', 0],
      ['creditNote', 15_000],
    ],
  );
  t.equal(positionFigures([], freightLines, []).totalsC.creditableVat, 135_000, '1,500.00 − 150.00');

  // Fuel paid in cash: its VAT was never credited, so a note gives nothing back of the creditable VAT.
  const fuel = withNotes(invoice({ uuid: 'PUE-3', paymentForm: '01', lines: [{ code: '15101505', base: 1_000 }] }), [], [note('NC-5', 'PUE-3', at(20), 116)]);
  const fuelLines = paymentLines(fuel, OCT);
  t.same(
    fuelLines.map((l) => [l.kind, l.restitutedVatC]),
    [
      ['pue', 0],
      ['creditNote', 0],
    ],
  );
  t.same(positionFigures([], fuelLines, []).totalsC, { ...positionFigures([], fuelLines.slice(0, 1), []).totalsC }, 'the note changes no figure');

  // Tyres PPD 11,600.00: 10,600.00 paid in cash on the 5th (over $2,000: not creditable), 1,000.00 by transfer on the 6th
  // (creditable 1,600 × 1,000 ÷ 11,600 = 137.93), then a note of 5,800.00: it gives back what was paid in proportion
  // to how it was paid, 5,800 × 1,000 ÷ 11,600 = 500.00 of the creditable part: VAT 1,600 × 500 ÷ 11,600 = 68.97. It
  // never takes back more than was credited (it took 800.00, the whole note's VAT, when the last payment was creditable).
  const tyres = (uuid: string) => invoice({ uuid, paymentMethod: 'PPD', lines: [{ code: '25172504', base: 10_000 }] });
  const mixed = withNotes(
    tyres('PPD-5'),
    [pay('P-7', 'PPD-5', at(5), 10_600, 11_600, '01'), pay('P-8', 'PPD-5', at(6), 1_000, 1_000)],
    [note('NC-7', 'PPD-5', at(8), 5_800)],
  );
  const mixedLines = paymentLines(mixed, OCT);
  t.same(
    mixedLines.map((l) => [l.kind, l.nonCreditable, l.vatC, l.restitutedVatC]),
    [
      ['payment', 'CASH_OVER_LIMIT', 146_207, 0],
      ['payment', null, 13_793, 0],
      ['creditNote', null, 0, 6_897],
    ],
  );
  t.equal(positionFigures([], mixedLines, []).totalsC.creditableVat, 6_896, '137.93 − 68.97');
  // The same payments the other way round: the note gives back the same share of the credited 1,000.00.
  const reversed = withNotes(
    tyres('PPD-6'),
    [pay('P-9', 'PPD-6', at(5), 1_000, 11_600), pay('P-10', 'PPD-6', at(6), 10_600, 10_600, '01')],
    [note('NC-8', 'PPD-6', at(8), 5_800)],
  );
  t.equal(paymentLines(reversed, OCT).find((l) => l.kind === 'creditNote')!.restitutedVatC, 6_897);

  // A USD invoice (1,000 + 160 = 1,160 USD at 17.00, PUE) and a USD note of 116 at 20.00: it gives back 16 USD of VAT
  // at its own TipoCambio, 320.00 MXN (at the invoice's 17.00 it was 272.00).
  const usdNote = buildReceivedDocument(
    'TGO850101AB1',
    invoice({ uuid: 'PUE-9', currency: 'USD', exchangeRate: 17, lines: [{ code: '78181500', base: 1_000 }] }),
    [],
    [{ kind: 'creditNote', uuid: 'NC-9', invoiceUuid: 'PUE-9', date: at(20), amount: 116, currency: 'USD', exchangeRate: 20 }],
    new Map(),
    [],
  );
  t.same(
    paymentLines(usdNote, OCT).map((l) => [l.kind, l.vatC, l.restitutedVatC]),
    [
      ['pue', 272_000, 0],
      ['creditNote', 0, 32_000],
    ],
    "VAT credited at the invoice's 17.00 (2,720.00); given back at the note's 20.00 (320.00)",
  );

  // A note dated in November gives back in November: October's lines do not hold it.
  const nov = withNotes(maintenance('PUE-4', 'PUE'), [], [note('NC-6', 'PUE-4', mxWallTimeToEpoch(2026, 11, 3, 12), 1_160)]);
  t.same(
    paymentLines(nov, OCT).map((l) => l.kind),
    ['pue'],
  );
  t.same(
    paymentLines(nov, mxMonthRange('2026-11')).map((l) => [l.kind, l.restitutedVatC]),
    [['creditNote', 16_000]],
  );
});

t.test("the carrier's credit note reduces the VAT collected by what it gives back of what was collected (LIVA art. 7)", async (t) => {
  // 10,000 freight to a company, PUE on 2026-10-05: 10,000 + 1,600 − 400 = 11,200 collected at its date. A note of
  // 1,120 on 2026-10-20 gives back 1,120 (0.1): VAT 160, the client's retention 40.
  const pue = makeFinancialDoc({
    client: CLIENT_COMPANY,
    date: '2026-10-05T10:00',
    paymentMethod: 'PUE',
    concepts: [freight(10_000)],
    payments: [creditNote(1_120, '2026-10-20T10:00', { uuid: 'NC-I1' })],
  });
  const lines = issuedLines(pue, OCT);
  t.same(
    lines.map((l) => [l.kind, l.noteUuid, l.paidC, l.share, l.vatC, l.vatRetainedC]),
    [
      ['collection', null, 1_120_000, 1, 160_000, 40_000],
      ['creditNote', 'NC-I1', 112_000, 0.1, -16_000, -4_000],
    ],
  );
  const f = positionFigures(lines, [], []);
  t.equal(f.totalsC.vatCollected, 144_000, '1,600 − 160');
  t.equal(f.totalsC.vatRetainedByClients, 36_000, '400 − 40');
  t.equal(f.vatPayableC, 108_000, '1,440 − 360');
  t.same(
    f.lines.vatCollected.map((l) => [l.settlement, l.paymentUuid, l.payments, l.amountC]),
    [
      ['pue', null, 1, 160_000],
      ['creditNote', 'NC-I1', 0, -16_000],
    ],
  );

  // PPD 22,400 (20,000 + 3,200 − 800): 5,600 collected in September; a note of 2,240 on 2026-10-02 closes part of the
  // 16,800 still open (nothing collected is given back); 14,560 collected on 2026-10-09 is the rest: 0.65 of the
  // taxes. October: VAT 2,080, retention 520; nothing negative.
  const ppd = makeFinancialDoc({
    client: CLIENT_COMPANY,
    date: '2026-09-01T10:00',
    paymentMethod: 'PPD',
    concepts: [freight(20_000)],
    payments: [payment(5_600, '2026-09-10T10:00'), creditNote(2_240, '2026-10-02T10:00'), payment(14_560, '2026-10-09T10:00')],
  });
  t.same(
    issuedLines(ppd, OCT).map((l) => [l.kind, l.vatC, l.vatRetainedC]),
    [['collection', 208_000, 52_000]],
  );

  // The same invoice collected in full in September, then a note of 2,240 in October: all of it gives back: VAT 320.
  const paid = makeFinancialDoc({
    client: CLIENT_COMPANY,
    date: '2026-09-01T10:00',
    paymentMethod: 'PPD',
    concepts: [freight(20_000)],
    payments: [payment(22_400, '2026-09-10T10:00'), creditNote(2_240, '2026-10-02T10:00', { uuid: 'NC-I2' })],
  });
  t.same(
    issuedLines(paid, OCT).map((l) => [l.kind, l.noteUuid, l.paidC, l.vatC, l.vatRetainedC]),
    [['creditNote', 'NC-I2', 224_000, -32_000, -8_000]],
  );
  // A note that closed part of the open balance leaves less to collect: what is collected beyond what it left open
  // carries no tax. PPD 11,200 on Oct 1, a note of 1,120 on Oct 2, then the client pays the whole 11,200 on Oct 9:
  // 10,080 counts, VAT 1,600 × 10,080 ÷ 11,200 = 1,440, retention 360.
  const overpaid = makeFinancialDoc({
    client: CLIENT_COMPANY,
    date: '2026-10-01T10:00',
    paymentMethod: 'PPD',
    concepts: [freight(10_000)],
    payments: [creditNote(1_120, '2026-10-02T10:00'), payment(11_200, '2026-10-09T10:00')],
  });
  t.same(
    issuedLines(overpaid, OCT).map((l) => [l.kind, l.paidC, l.share, l.vatC, l.vatRetainedC]),
    [['collection', 1_008_000, 0.9, 144_000, 36_000]],
  );
  // A cancelled note gives back nothing; nor does a note on a cancelled invoice.
  const cancelledNote = makeFinancialDoc({
    client: CLIENT_COMPANY,
    date: '2026-10-05T10:00',
    paymentMethod: 'PUE',
    concepts: [freight(10_000)],
    payments: [creditNote(1_120, '2026-10-20T10:00', { uuid: 'NC-I3' })],
    canceled: [paymentCancellation('NC-I3', '2026-10-21T10:00')],
  });
  t.same(
    issuedLines(cancelledNote, OCT).map((l) => l.kind),
    ['collection'],
  );
});

t.test('the non-creditable cases, in order', async (t) => {
  const fuelCash = build(invoice({ paymentForm: '01', lines: [{ code: '15101505', base: 5_000 }] }));
  t.equal(nonCreditableReason(fuelCash, '01', 580_000), 'FUEL_PAID_IN_CASH');
  t.equal(nonCreditableReason(fuelCash, '01', 10_000), 'FUEL_PAID_IN_CASH', 'fuel in cash, whatever the amount');
  t.equal(nonCreditableReason(fuelCash, '03', 580_000), null, 'fuel paid by transfer is creditable');
  // LISR art. 27 fr. III: any other payment over $2,000.00 in cash is not deductible; $2,000.00 itself is.
  const tyresCash = build(invoice({ paymentForm: '01', lines: [{ code: '25172504', base: 5_000 }] }));
  t.equal(nonCreditableReason(tyresCash, '01', 580_000), 'CASH_OVER_LIMIT', 'tyres, 5,800.00 in cash');
  t.equal(nonCreditableReason(tyresCash, '01', 200_001), 'CASH_OVER_LIMIT', '2,000.01 in cash');
  t.equal(nonCreditableReason(tyresCash, '01', 200_000), null, '2,000.00 in cash: not over the limit');
  t.equal(nonCreditableReason(tyresCash, '03', 580_000), null, 'by transfer');
  t.equal(
    nonCreditableReason(build(invoice({ use: 'S01', paymentForm: '01', lines: [{ code: '15101505', base: 100 }] })), '01', 11_600),
    'USE_S01',
    'S01 first',
  );
  t.equal(nonCreditableReason(build(invoice({ lines: [{ code: '95111602', base: 100, transfers: [] }] })), '03', 10_000), 'NO_VAT_SHOWN');
  const exempt = build(invoice({ lines: [{ code: '84131503', base: 100, transfers: [{ tax: 'IVA', factor: 'Exento', rate: null, base: 100, amount: 0 }] }] }));
  t.equal(nonCreditableReason(exempt, '03', 10_000), null, 'an exempt line shows the VAT treatment: nothing to credit, no warning');
  const fuelPue = paymentLines(fuelCash, OCT);
  t.same(
    fuelPue.map((l) => [l.form, l.vatC, l.nonCreditable]),
    [['01', 80_000, 'FUEL_PAID_IN_CASH']],
    'a PUE invoice is paid as its FormaPago says',
  );
});

t.test('a USD invoice paid beyond its Total at another rate: the collection is converted at the rate of what counts', async (t) => {
  // 1,000 + 160 − 40 = 1,120 USD (PPD), paid in full at 17.00 on 10-10 and again (a duplicated complement) at 20.00 on
  // 10-20: October collected 1,120 USD at 17.00 = 19,040.00 (VAT 2,720.00, retained 680.00); the second payment is
  // beyond the Total and carries nothing, so it weighs nothing in the conversion (it gave 18.50: VAT 2,960.00).
  const usd = { currency: 'USD', exchangeRate: 17, paymentMethod: 'PPD' as const, concepts: [freight(1_000)] };
  const twice = makeFinancialDoc({ ...usd, payments: [payment(1_120, at(10), { exchangeRate: 17 }), payment(1_120, at(20), { exchangeRate: 20 })] });
  t.match(collectionLine(twice, OCT), { paidC: 1_904_000, vatC: 272_000, vatRetainedC: 68_000 });
  t.match(cashBasisForPeriod(twice, OCT), { counted: 1_120, exchangeRate: 17 });
  // 560 at 17.00, then 1,120 at 20.00 of which 560 counts: (560 × 17 + 560 × 20) ÷ 1,120 = 18.50 (VAT 160 × 18.50).
  const part = makeFinancialDoc({ ...usd, payments: [payment(560, at(10), { exchangeRate: 17 }), payment(1_120, at(20), { exchangeRate: 20 })] });
  t.match(collectionLine(part, OCT), { paidC: 2_072_000, vatC: 296_000, vatRetainedC: 74_000 });
  // Half paid in September at 17.00; October's 1,120 at 20.00 counts 560 only: October at 20.00.
  const later = makeFinancialDoc({
    ...usd,
    payments: [payment(560, mxWallTimeToEpoch(2026, 9, 20, 12), { exchangeRate: 17 }), payment(1_120, at(20), { exchangeRate: 20 })],
  });
  t.match(collectionLine(later, OCT), { paidC: 1_120_000, vatC: 160_000, vatRetainedC: 40_000 });
  // A note of 112 USD (100 + 16 − 4) on 10-05 closes what is open; 1,008 paid at 17.00 on 10-10 pays what is left and 112
  // more at 20.00 on 10-20 carry no tax: October collected 1,008 USD at 17.00 (VAT 144 × 17 = 2,448.00, retained 612.00).
  const noted = makeFinancialDoc({
    ...usd,
    payments: [
      creditNote(112, at(5), { taxes: { vat: 16, vatRetained: 4, isrRetained: 0 } }),
      payment(1_008, at(10), { exchangeRate: 17 }),
      payment(112, at(20), { exchangeRate: 20 }),
    ],
  });
  t.match(issuedLines(noted, OCT), [{ kind: 'collection', paidC: 1_713_600, vatC: 244_800, vatRetainedC: 61_200 }]);
  // The tax summary's payment basis converts its amounts at the same rate.
  const [c] = paymentBasisContributions(twice, reconcileDocument(twice, DEFAULT_SETTINGS), [OCT]);
  t.match(c?.amounts, { collected: 1_904_000, total: 1_904_000, subtotal: 1_700_000, vatDeclared: 272_000, retentionDeclared: 68_000 });
});

t.test('figures: VAT payable = collected − retained by clients − creditable − retention credit', async (t) => {
  // Issued: 10,000 freight to a company, PUE on 2026-10-05: VAT 1,600, retention 400.
  const issued = makeFinancialDoc({ client: CLIENT_COMPANY, date: '2026-10-05T10:00', paymentMethod: 'PUE', concepts: [freight(10_000)] });
  // Issued PPD 20,000 (Total 22,400), a quarter paid in October: VAT 800, retention 200.
  const ppd = makeFinancialDoc({
    client: CLIENT_COMPANY,
    date: '2026-09-05T10:00',
    paymentMethod: 'PPD',
    concepts: [freight(20_000)],
    payments: [payment(5_600, '2026-10-07T10:00')],
  });
  const collections = [collectionLine(issued, OCT)!, collectionLine(ppd, OCT)!];
  t.same(
    collections.map((c) => [c.paidC, c.share, c.vatC, c.vatRetainedC]),
    [
      [1_120_000, 1, 160_000, 40_000],
      [560_000, 0.25, 80_000, 20_000],
    ],
  );
  // Received: freight subcontracted 12,500 + 2,000 − 500 (PUE), and fuel paid in cash 5,000 + 800.
  const sub = build(
    invoice({
      uuid: 'FR-1',
      date: at(12),
      lines: [{ code: '78101802', base: 12_500, retentions: [{ tax: 'IVA', factor: 'Tasa', rate: 0.04, base: 12_500, amount: 500 }] }],
    }),
  );
  const fuel = build(invoice({ uuid: 'FU-1', paymentForm: '01', lines: [{ code: '15101505', base: 5_000 }] }));
  const sept = build(
    invoice({
      uuid: 'FR-0',
      date: mxWallTimeToEpoch(2026, 9, 20, 12),
      lines: [{ code: '78101802', base: 2_500, retentions: [{ tax: 'IVA', factor: 'Tasa', rate: 0.04, base: 2_500, amount: 100 }] }],
    }),
  );
  // September also paid subcontracted freight "sin efectos fiscales" (S01), retaining 200: owed to the SAT, but its VAT,
  // the retained part too, is not creditable (LIVA art. 5 fr. I), so October credits none of it.
  const septS01 = build(
    invoice({
      uuid: 'FR-S01',
      use: 'S01',
      date: mxWallTimeToEpoch(2026, 9, 22, 12),
      lines: [{ code: '78101802', base: 5_000, retentions: [{ tax: 'IVA', factor: 'Tasa', rate: 0.04, base: 5_000, amount: 200 }] }],
    }),
  );
  const SEPT = { start: mxMonthRange('2026-09').start, endExclusive: OCT.start };
  const f = positionFigures(
    collections,
    [...paymentLines(sub, OCT), ...paymentLines(fuel, OCT)],
    [...paymentLines(sept, SEPT), ...paymentLines(septS01, SEPT)],
  );
  t.same(
    [
      f.totalsC.vatCollected,
      f.totalsC.vatRetainedByClients,
      f.totalsC.creditableVat,
      f.totalsC.nonCreditableVat,
      f.totalsC.retentionCredit,
      f.totalsC.vatRetainedByCarrier,
    ],
    [240_000, 60_000, 150_000, 80_000, 10_000, 50_000],
  );
  // Creditable: the 2,000 of VAT less the 500 the carrier retained (LIVA art. 5 fr. III: what was paid to the supplier),
  // the 500 credited next month once paid to the SAT (fr. IV), as September's 100 is now.
  // 2,400 − 600 − 1,500 − 100 = 200.00 payable.
  t.equal(f.vatPayableC, 20_000);
});

t.test("DIOT: a fee supplier's credit note and a payment beyond the Total stay in its row 03", async (t) => {
  // A persona física's fees: 10,000.00 + 1,600.00 − 1,066.67 IVA retained − 1,000.00 ISR = 9,533.33, paid in full; a note of
  // 953.33 (0.1: returns 1,000.00), then a complement of 500.00 beyond the Total. One row 03, one document.
  const fees = invoice({
    uuid: 'FEE-1',
    supplier: { rfc: 'MAPJ800101AB2', name: 'JUAN MARTINEZ' },
    paymentMethod: 'PPD',
    lines: [
      {
        code: '80111600',
        base: 10_000,
        retentions: [
          { tax: 'IVA', factor: 'Tasa', rate: 0.106667, base: 10_000, amount: 1_066.67 },
          { tax: 'ISR', factor: 'Tasa', rate: 0.1, base: 10_000, amount: 1_000 },
        ],
      },
    ],
  });
  const withNote = withNotes(
    fees,
    [pay('FP-1', 'FEE-1', at(5), 9_533.33, 9_533.33), pay('FP-2', 'FEE-1', at(9), 500, 500)],
    [note('FN-1', 'FEE-1', at(7), 953.33)],
  );
  const rows = diotRows(paymentLines(withNote, OCT));
  t.same(
    rows.map((r) => [r.operationType, r.documents, r.returnsAndDiscounts]),
    [['03', 1, 1_000]],
  );
});

t.test('DIOT: type of third party and of operation, rows by supplier', async (t) => {
  t.equal(thirdPartyTypeOf('XEXX010101000'), '05');
  t.equal(thirdPartyTypeOf('XAXX010101000'), '15');
  t.equal(thirdPartyTypeOf('TRA920101XY3'), '04');
  t.equal(operationTypeOf({ party: 'MAPJ800101AB2', mainCode: '78181506', retainsIsr: true }), '03', 'a persona física with ISR retained: fees');
  t.equal(operationTypeOf({ party: 'MAPJ800101AB2', mainCode: '78181506', retainsIsr: false }), '85');
  t.equal(operationTypeOf({ party: 'INM010101AB1', mainCode: '80131502', retainsIsr: false }), '06', 'leasing of real estate');
  // The 2025 catalogue (SAT, Instructivo de carga masiva DIOT, enero 2025, §3.1).
  t.equal(operationTypeOf({ party: 'PEJL700101AB3', mainCode: '80131502', retainsIsr: true }), '06', "a persona física's rent: leasing, not fees");
  t.equal(operationTypeOf({ party: 'PGA010101AB1', mainCode: '15101505', retainsIsr: false }), '02', 'diesel: goods');
  t.equal(operationTypeOf({ party: 'LLA010101AB1', mainCode: '25172504', retainsIsr: false }), '02', 'tyres: goods');
  t.equal(operationTypeOf({ party: 'TRA920101XY3', mainCode: '78101802', retainsIsr: false }), '85', 'freight another carrier hauled: a service');
  t.equal(operationTypeOf({ party: 'XAXX010101000', mainCode: '15101505', retainsIsr: false }), '87', 'the global third party: global operations');
  t.equal(
    operationTypeOf({ party: 'XEXX010101000', mainCode: '81112501', retainsIsr: false }),
    '07',
    "a foreign supplier's service: imported (85 is not accepted with 05)",
  );
  t.equal(operationTypeOf({ party: 'XEXX010101000', mainCode: '25172504', retainsIsr: false }), '02', "a foreign supplier's goods");
  const bodega = build(invoice({ uuid: 'L-1', supplier: { rfc: 'INM010101AB1', name: 'Bodega, "Norte"' }, lines: [{ code: '80131502', base: 8_000 }] }));
  const rows = diotRows(paymentLines(bodega, OCT));
  t.match(rows, [
    { thirdPartyType: '04', operationType: '06', rfc: 'INM010101AB1', paid: { rate16: 8_000 }, vat: { rate16: 1_280, creditable: 1_280, nonCreditable: 0 } },
  ]);
  const csv = diotCsv(rows).split('\r\n');
  t.equal(csv[1], '04,06,INM010101AB1,,"Bodega, ""Norte""",8000.00,0.00,0.00,0.00,0.00,1280.00,0.00,1280.00,0.00,0.00,0.00', 'RFC 4180 quoting');
});

t.test('DIOT: foreign suppliers share one generic RFC, told apart by name; the months kept on write agree', async (t) => {
  t.equal(foreignSupplierKey('  acme\t llc\u00a0'), 'ACME LLC', 'trimmed, white space as one space, upper case');
  t.equal(foreignSupplierKey('Stra\u00dfe GmbH'), foreignSupplierKey('STRASSE GMBH'), 'full upper-casing');
  t.equal(foreignSupplierKey('Cafe\u0301 SARL'), foreignSupplierKey('Caf\u00e9 SARL'), 'NFC');
  t.not(foreignSupplierKey('ACME, LLC'), foreignSupplierKey('ACME LLC'), 'punctuation kept');
  // ACME LLC 100.00 + 16.00 on the 8th; GLOBEX GMBH 200.00 + 32.00 on the 9th; "globex  gmbh" 50.00 + 8.00 on the 12th: two rows.
  const foreign = (uuid: string, name: string, day: number, base: number) =>
    build(invoice({ uuid, supplier: { rfc: 'XEXX010101000', name }, date: at(day), lines: [{ code: '81112100', base }] }));
  const docs = [foreign('F-1', 'ACME LLC', 8, 100), foreign('F-2', 'GLOBEX GMBH', 9, 200), foreign('F-3', 'globex  gmbh', 12, 50)];
  const byDoc = docs.map((d) => paymentLines(d, OCT));
  const lines = byDoc.flat();
  const rows = diotRows(lines);
  t.same(
    rows.map((r) => [r.thirdPartyType, r.operationType, r.rfc, r.name, r.paid.rate16, r.vat.rate16, r.documents]),
    [
      ['05', '07', null, 'ACME LLC', 100, 16, 1],
      ['05', '07', null, 'globex  gmbh', 250, 40, 2],
    ],
  );
  t.same(diotRows([...lines].reverse()), rows, 'whatever order the lines come in');
  // Kept on write: each day its share, the month their sum (tax-position-rollup.ts), in the same order.
  // Per document, as refresh-tax-position.ts reads them: which of its lines counts it in its row.
  const counting = new Set(byDoc.flatMap((l) => [...documentCountingLines(l)]));
  const kept = (d: string) =>
    rollUpTaxPositionDay(
      'T',
      `2026-10-${d}`,
      [],
      lines.filter((l) => l.date === at(Number(d))),
      (l) => counting.has(l),
    ).day!;
  const days = [kept('08'), kept('09'), kept('12')];
  t.same(
    rollUpTaxPositionMonth('T', '2026-10', days).entries.map((e) => e.row),
    rows,
    'the month added up from its days',
  );
});

t.test('retentions are due by the 17th of the next month, or the next business day (CFF art. 12)', async (t) => {
  t.equal(retentionDueDate('2026-10'), '2026-11-17');
  t.equal(retentionDueDate('2026-12'), '2027-01-18', 'Sunday 17 January 2027 → Monday 18');
});

t.test('a page of a month kept in days: ranks of the month become ranges of ranks within its days', async (t) => {
  // Figure lines per day: the 3rd holds ranks 0–1, the 7th 2–6, the 9th 7–9 of the month.
  const days = [
    { day: '2026-10-03', count: 2 },
    { day: '2026-10-07', count: 5 },
    { day: '2026-10-09', count: 3 },
  ];
  t.same(rankRanges(days, 0, 2), [{ day: '2026-10-03', from: 0, to: 2 }], 'the first day exactly');
  t.same(
    rankRanges(days, 1, 8),
    [
      { day: '2026-10-03', from: 1, to: 2 },
      { day: '2026-10-07', from: 0, to: 5 },
      { day: '2026-10-09', from: 0, to: 1 },
    ],
    'across three days',
  );
  t.same(rankRanges(days, 4, 6), [{ day: '2026-10-07', from: 2, to: 4 }], 'within one day');
  t.same(rankRanges(days, 9, 20), [{ day: '2026-10-09', from: 2, to: 3 }], 'past the end: what there is');
  t.same(rankRanges(days, 10, 20), [], 'beyond the last rank: nothing');
  t.same(rankRanges([], 0, 10), [], 'a month without lines');
});

t.test('partOfRunningC: the parts of a document paid in instalments add up to its taxes, however they split it', async (t) => {
  // 1,600.00 of VAT on 11,600.00 paid in thirds (386,667 / 773,334 / 1,160,000 cents): round(53,333.379) = 53,333;
  // round(106,666.759) = 106,667 − 53,333 = 53,334; 160,000 − 106,667 = 53,333 (each third rounded alone: 53,333 × 3).
  t.same(
    [
      partOfRunningC(160_000, 0, 386_667, 1_160_000),
      partOfRunningC(160_000, 386_667, 386_667, 1_160_000),
      partOfRunningC(160_000, 773_334, 386_666, 1_160_000),
    ],
    [53_333, 53_334, 53_333],
  );
  t.equal(partOfRunningC(160_000, 0, 464_000, 1_160_000), proportionC(160_000, 464_000, 1_160_000), 'a first payment: its own proportion');

  // Issued PPD 11,200.00 (10,000 + 1,600 − 400) on Aug 1; a note of 1,120.00 on Aug 2 closes part of what is open
  // (10,080.00 left); collected 3,733.33 on Aug 10, 3,733.33 on Sep 10, 3,733.34 on Oct 10. October's collection counts
  // only 10,080.00 − 7,466.66 = 2,613.34 (the rest is beyond what the note left open). Running totals 373,333 /
  // 746,666 / 1,008,000 cents of 1,120,000: VAT 53,333 (round 53,333.286), 106,667 − 53,333 = 53,334 (round
  // 106,666.571), 144,000 − 106,667 = 37,333: 1,440.00 = 1,600 × 10,080 ÷ 11,200; retention 13,333, 26,667 − 13,333 =
  // 13,334, 36,000 − 26,667 = 9,333: 360.00. (Each month rounded alone: 533.33 + 533.33 + 373.33 = 1,439.99.)
  const doc = makeFinancialDoc({
    client: CLIENT_COMPANY,
    date: '2026-08-01T10:00',
    paymentMethod: 'PPD',
    concepts: [freight(10_000)],
    payments: [
      creditNote(1_120, '2026-08-02T10:00'),
      payment(3_733.33, '2026-08-10T10:00'),
      payment(3_733.33, '2026-09-10T10:00'),
      payment(3_733.34, '2026-10-10T10:00'),
    ],
  });
  const months = ['2026-08', '2026-09', '2026-10'].map((m) =>
    issuedLines(doc, { month: m, ...mxMonthRange(m) }).map((l) => [l.kind, l.paidC, l.vatC, l.vatRetainedC]),
  );
  t.same(months, [[['collection', 373_333, 53_333, 13_333]], [['collection', 373_333, 53_334, 13_334]], [['collection', 261_334, 37_333, 9_333]]]);
});

t.test('received: payments and notes in thirds carry exactly the invoice’s VAT and value (each from the running total)', async (t) => {
  // PPD 10,000.00 + 1,600.00 = 11,600.00 paid 3,866.67, 3,866.67, 3,866.66 (running 386,667 / 773,334 / 1,160,000 cents):
  // VAT 53,333 / 106,667 − 53,333 = 53,334 / 160,000 − 106,667 = 53,333; base round(333,333.621) = 333,334,
  // round(666,667.241) = 666,667 − 333,334 = 333,333, 1,000,000 − 666,667 = 333,333 (alone: 53,333 × 3, 333,334 × 2 + 333,333).
  const ppd = build(invoice({ uuid: 'PPD-T', paymentMethod: 'PPD', lines: [{ code: '78181500', base: 10_000 }] }), [
    pay('T-1', 'PPD-T', at(10), 3_866.67, 11_600),
    pay('T-2', 'PPD-T', at(11), 3_866.67, 7_733.33),
    pay('T-3', 'PPD-T', at(12), 3_866.66, 3_866.66),
  ]);
  t.same(
    paymentLines(ppd, OCT).map((l) => [l.paymentUuid, l.vatC, l.basesC.rate16]),
    [
      ['T-1', 53_333, 333_334],
      ['T-2', 53_334, 333_333],
      ['T-3', 53_333, 333_333],
    ],
  );
  // PUE 11,600.00 paid, then three notes (kept before their taxes were: the invoice's stand in) of the same thirds:
  // the value returned 333,334 + 333,333 + 333,333 = 10,000.00 and the VAT given back 53,333 + 53,334 + 53,333 = 1,600.00.
  const pue = withNotes(
    invoice({ uuid: 'PUE-T', lines: [{ code: '78181500', base: 10_000 }] }),
    [],
    [note('NT-1', 'PUE-T', at(20), 3_866.67), note('NT-2', 'PUE-T', at(21), 3_866.67), note('NT-3', 'PUE-T', at(22), 3_866.66)],
  );
  t.same(
    paymentLines(pue, OCT)
      .filter((l) => l.kind === 'creditNote')
      .map((l) => [l.paymentUuid, l.returnsC, l.restitutedVatC]),
    [
      ['NT-1', 333_334, 53_333],
      ['NT-2', 333_333, 53_334],
      ['NT-3', 333_333, 53_333],
    ],
  );
});
