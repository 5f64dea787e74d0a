/** The tax model's pure parts on hand-computed values: tax lines, IVA bases, currency, business days. */
import t from 'tap';
import { conceptTaxes, documentTaxTotalsC, groupedCents, isNotSubject, retentionGroup, taxTotalsC, transferGroup, vatBucket } from '../../lib/tax/tax-lines.ts';
import { centsToMxnCents, mxnCents, rateOf, toMxn } from '../../lib/money/currency.ts';
import { businessDaysDeadline, cffHolidays, isBusinessDay, onBusinessDay, receiverDeadline } from '../../lib/time/business-days.ts';
import { retentionDueDate } from '../../lib/tax/get-tax-position.ts';
import type { InvoiceConcept } from '../../lib/model/financial-document.ts';

const concept = (over: Partial<InvoiceConcept>): InvoiceConcept => ({
  code: '78101802',
  kind: 'freight',
  desc: 'Flete',
  quantity: 1,
  unitPrice: 1000,
  amount: 1000,
  discount: 0,
  objetoImp: '02',
  vatRate: 0.16,
  vat: 160,
  retentionRate: 0.04,
  retention: 40,
  ...over,
});

t.test('a concept without `taxes` has only the IVA of its compact fields, on amount − discount', async (t) => {
  t.same(conceptTaxes(concept({ amount: 1000, discount: 100, vat: 144, retention: 36 })), {
    transfers: [{ tax: 'IVA', factor: 'Tasa', rate: 0.16, base: 900, amount: 144 }],
    retentions: [{ tax: 'IVA', factor: 'Tasa', rate: 0.04, base: 900, amount: 36 }],
  });
  t.same(conceptTaxes(concept({ retentionRate: 0.04, retention: 0 })).retentions, [], 'no retention line for a zero retention');
  t.same(
    conceptTaxes(concept({ objetoImp: '01', vatRate: 0, vat: 0, retentionRate: 0, retention: 0 })),
    { transfers: [], retentions: [] },
    'not subject: no line',
  );
  t.same(
    conceptTaxes(concept({ objetoImp: '01', vatRate: 0.16, vat: 5, retention: 0 })).transfers,
    [{ tax: 'IVA', factor: 'Tasa', rate: 0.16, base: 1000, amount: 5 }],
    'VAT declared on a not-subject line stays visible',
  );
  const taxes = { transfers: [{ tax: 'IEPS' as const, factor: 'Exento' as const, rate: null, base: 1000, amount: 0 }], retentions: [] };
  t.equal(conceptTaxes(concept({ taxes })), taxes, 'stored lines win');
});

t.test('not subject: ObjetoImp 01, or another key without any tax line', async (t) => {
  t.ok(isNotSubject(concept({ objetoImp: '01' })));
  t.notOk(isNotSubject(concept({ objetoImp: '02', vat: 0, retention: 0 })));
  t.ok(isNotSubject(concept({ objetoImp: '03', vat: 0, retention: 0 })), '03 without lines');
  t.notOk(
    isNotSubject(concept({ objetoImp: '03', taxes: { transfers: [{ tax: 'IVA', factor: 'Tasa', rate: 0.16, base: 1000, amount: 160 }], retentions: [] } })),
    '03 with lines',
  );
});

t.test('IVA bases by rate', async (t) => {
  t.equal(vatBucket({ factor: 'Tasa', rate: 0.16 }), 'rate16');
  t.equal(vatBucket({ factor: 'Tasa', rate: 0.08 }), 'rate8');
  t.equal(vatBucket({ factor: 'Tasa', rate: 0 }), 'rate0');
  t.equal(vatBucket({ factor: 'Exento', rate: null }), 'exempt');
  t.equal(vatBucket({ factor: 'Tasa', rate: 0.11 }), 'otherRates');
  t.equal(vatBucket({ factor: 'Cuota', rate: 1.5 }), 'otherRates');
});

t.test('document totals from every line; a header-only document has its IVA header', async (t) => {
  // Freight 10,000: IVA 1,600, IVA ret 400, ISR ret 125; insurance 300 exempt; fuel 500: IEPS Cuota 0.5 × 100 L = 50 + IVA 16% on 550 = 88.
  const doc = {
    iTax1: 0,
    iTax2: 0,
    invoice: {
      concepts: [
        concept({
          amount: 10_000,
          vat: 1600,
          retention: 400,
          taxes: {
            transfers: [{ tax: 'IVA', factor: 'Tasa', rate: 0.16, base: 10_000, amount: 1600 }],
            retentions: [
              { tax: 'IVA', factor: 'Tasa', rate: 0.04, base: 10_000, amount: 400 },
              { tax: 'ISR', factor: 'Tasa', rate: 0.0125, base: 10_000, amount: 125 },
            ],
          },
        }),
        concept({ amount: 300, taxes: { transfers: [{ tax: 'IVA', factor: 'Exento', rate: null, base: 300, amount: 0 }], retentions: [] } }),
        concept({
          amount: 500,
          taxes: {
            transfers: [
              { tax: 'IEPS', factor: 'Cuota', rate: 0.5, base: 100, amount: 50 },
              { tax: 'IVA', factor: 'Tasa', rate: 0.16, base: 550, amount: 88 },
            ],
            retentions: [],
          },
        }),
      ],
    },
  };
  t.same(documentTaxTotalsC(doc), {
    vatBases: { rate16: 1_055_000, rate8: 0, rate0: 0, exempt: 30_000, otherRates: 0 },
    vatTransferred: 168_800,
    vatRetained: 40_000,
    isrTransferred: 0,
    isrRetained: 12_500,
    iepsTransferred: 5_000,
    iepsRetained: 0,
    transferred: 173_800,
    retained: 52_500,
  });
  const header = documentTaxTotalsC({ iTax1: 160, iTax2: 40, invoice: { concepts: [] } });
  t.match(header, { vatTransferred: 16_000, vatRetained: 4_000, transferred: 16_000, retained: 4_000 });
});

t.test("a document's tax totals: per group (tax, factor, rate; retentions by tax) the exact sum of its lines rounded once", async (t) => {
  const l = (tax: 'IVA' | 'ISR' | 'IEPS', rate: number | null, base: number, amount: number, factor: 'Tasa' | 'Cuota' | 'Exento' = 'Tasa') => ({
    tax,
    factor,
    rate,
    base,
    amount,
  });
  // IVA 16%: 3 × (10.333333, 1.653333) → bases 30.999999 → 31.00, amounts 4.959999 → 4.96 (each rounded first: 31.00, 4.95).
  // IVA 8%: 3 × (10.333333, 0.826666) → 31.00 and 2.479998 → 2.48 (each rounded first: 0.83 × 3 = 2.49): a group of its own.
  // ISR retained 1.25%: 3 × 0.129166 = 0.387498 → 0.39 (each rounded first: 0.39); IVA retained 2 × 0.413333 = 0.826666 → 0.83
  // (each rounded first: 0.82). Transferred 4.96 + 2.48 = 7.44; retained 0.39 + 0.83 = 1.22.
  const at16 = { transfers: [l('IVA', 0.16, 10.333333, 1.653333)], retentions: [l('ISR', 0.0125, 10.333333, 0.129166)] };
  const at8 = { transfers: [l('IVA', 0.08, 10.333333, 0.826666)], retentions: [l('IVA', 0.04, 10.333333, 0.413333)] };
  const totals = taxTotalsC([at16, at16, at16, at8, at8, { transfers: at8.transfers, retentions: [] }]);
  t.same(totals, {
    vatBases: { rate16: 3_100, rate8: 3_100, rate0: 0, exempt: 0, otherRates: 0 },
    vatTransferred: 744,
    vatRetained: 83,
    isrTransferred: 0,
    isrRetained: 39,
    iepsTransferred: 0,
    iepsRetained: 0,
    transferred: 744,
    retained: 122,
  });
  // Each group is rounded by itself: IVA 16% 2 × 0.0025 = 0.005 → 0.01 and IVA 8% 2 × 0.0025 = 0.005 → 0.01 are 0.02 as
  // transfers (grouped by rate); by tax alone (as retentions are grouped) they are one group, 0.010 → 0.01.
  const tiny = [l('IVA', 0.16, 0.015625, 0.0025), l('IVA', 0.16, 0.015625, 0.0025), l('IVA', 0.08, 0.03125, 0.0025), l('IVA', 0.08, 0.03125, 0.0025)];
  t.equal(groupedCents(tiny, transferGroup, 'amount'), 2);
  t.equal(groupedCents(tiny, retentionGroup, 'amount'), 1);
});

t.test('currency: amounts × TipoCambio, rounded half away from zero to cents', async (t) => {
  t.equal(rateOf({}), 1, 'no rate: MXN');
  t.equal(rateOf({ exchangeRate: 17.25 }), 17.25);
  t.equal(mxnCents(2000, 17.25), 3_450_000);
  t.equal(mxnCents(0.03, 17.25), 52, '0.5175 → 0.52');
  t.equal(mxnCents(1.0, 18.9008), 1890);
  t.equal(centsToMxnCents(200_000, 17.8), 3_560_000);
  t.equal(centsToMxnCents(-1000, 17.25), -17_250, 'a negative difference converts too');
  t.equal(toMxn(123.45, 1), 123.45);
});

t.test('business days (CFF art. 12): weekends and the listed holidays; the receiver has 3', async (t) => {
  // CFF art. 12: "el 1o. y 5 de mayo" (5 May is no day of rest under the labour law, but the tax code does not count it).
  t.same([...cffHolidays(2026)].sort(), ['2026-01-01', '2026-02-02', '2026-03-16', '2026-05-01', '2026-05-05', '2026-09-16', '2026-11-16', '2026-12-25']);
  // A request on Mon 4 May: Tue 5 is not counted, so Wed 6, Thu 7, Fri 8: ends Sat 9 at 00:00 (not Fri 8 at 00:00).
  t.equal(new Date(receiverDeadline(Date.parse('2026-05-04T16:00:00Z'))).toISOString(), '2026-05-09T06:00:00.000Z');
  // A due date on a day off moves to the next business day (CFF art. 12): Sat 17 Oct 2026 → Mon 19.
  t.equal(onBusinessDay('2026-10-17'), '2026-10-19');
  t.equal(onBusinessDay('2026-11-17'), '2026-11-17', 'a business day stays');
  t.equal(retentionDueDate('2026-09'), '2026-10-19');
  t.equal(retentionDueDate('2027-03'), '2027-04-19', 'Sat 17 Apr 2027 → Mon 19');
  t.ok(cffHolidays(2030).has('2030-10-01'), 'presidential transfer, every six years from 2024');
  t.notOk(isBusinessDay('2026-10-17'), 'Saturday');
  t.notOk(isBusinessDay('2026-11-16'), 'third Monday of November');
  t.ok(isBusinessDay('2026-11-17'));
  // Tuesday 13 Oct 10:00 → Wed 14, Thu 15, Fri 16: ends Saturday 17 at 00:00 Mexico City (06:00 UTC).
  t.equal(new Date(receiverDeadline(Date.parse('2026-10-13T16:00:00Z'))).toISOString(), '2026-10-17T06:00:00.000Z');
  // Friday 13 Nov → Tue 17, Wed 18, Thu 19 (Monday 16 is a holiday): ends Friday 20 at 00:00.
  t.equal(new Date(receiverDeadline(Date.parse('2026-11-13T20:00:00Z'))).toISOString(), '2026-11-20T06:00:00.000Z');
  // Late on a Friday evening in Mexico City is still Friday there.
  t.equal(
    new Date(businessDaysDeadline(Date.parse('2026-10-17T05:00:00Z'), 1)).toISOString(),
    '2026-10-20T06:00:00.000Z',
    'Fri 23:00 → Mon 19 → ends Tue 20 00:00',
  );
});
