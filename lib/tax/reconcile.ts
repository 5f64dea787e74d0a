/**
 * Tax reconciliation of CFDI invoices (domain.md "Tax reconciliation").
 *
 * The naive check "retention = 4% × SubTotal" raises false discrepancies when
 * an invoice carries a shortage/indemnity line (ObjetoImp 01) or an accessorial
 * line. Here every concept is placed in its own base:
 *   - freight base   = Σ (amount − discount) of subject freight concepts
 *                      (kind 'freight', or SAT 78101800 family; see isFreightConcept);
 *   - taxable base   = Σ base of subject concepts (ObjetoImp 02);
 *   - exempt amount  = Σ base of ObjetoImp 01/03 concepts, reported as `info`;
 *   - expected VAT   = Σ round2(base × rate), rate ∈ {0.16, 0.08, settings.vatRate};
 *   - expected retention = company client ? Σ round2(freight base × 4%) : 0.
 * Money comparisons are in integer cents against settings.discrepancyTolerance.
 */
import type { FinancialDocument, InvoiceConcept, PaymentRecord } from '../model/financial-document.ts';
import type { TenantSettings } from '../model/tenant-settings.ts';
import { diffCents, differsBeyond, fromCents, round2, taxOn, toCents } from '../money/cents.ts';
import { invoiceCancellation, isPaymentCancelled } from '../finance/cancellation.ts';
import { isValidRfc, taxpayerKind, type TaxpayerKind } from './rfc.ts';
import { mxMonthKey } from '../time/mexico-city.ts';

export type ReconcileSettings = Pick<TenantSettings, 'vatRate' | 'retentionRate' | 'discrepancyTolerance'>;

/** SAT product keys 78101800–78101899: road freight and its variants. */
export const FREIGHT_CODE_PREFIX = '781018';
/** General rate and the northern/southern border-region stimulus rate. */
export const ALLOWED_VAT_RATES: readonly number[] = [0.16, 0.08];

export type FindingKind = 'discrepancy' | 'warning' | 'info';

export type FindingCode =
  // discrepancies: arithmetic does not add up
  | 'VAT_MISMATCH'
  | 'RETENTION_MISMATCH'
  | 'INVALID_VAT_RATE'
  | 'TOTAL_MISMATCH'
  | 'SUBTOTAL_MISMATCH'
  | 'DISCOUNT_MISMATCH'
  | 'VAT_SUM_MISMATCH'
  | 'RETENTION_SUM_MISMATCH'
  | 'NEGATIVE_TOTAL'
  // warnings: legal/practice issues for the client type or data quality
  | 'RETENTION_MISSING'
  | 'RETENTION_UNEXPECTED'
  | 'FREIGHT_WITHOUT_RETENTION'
  | 'FREIGHT_NOT_SUBJECT'
  | 'INVALID_CLIENT_RFC'
  | 'NO_CONCEPTS'
  // informational
  | 'EXEMPT_EXCLUDED'
  | 'ACCESSORIAL_RETENTION'
  | 'DOCUMENT_CANCELLED';

export interface Finding {
  kind: FindingKind;
  /** Stable machine code; messages may change, codes do not. */
  code: FindingCode;
  docId: string;
  uuid: string;
  /** Index into invoice.concepts; absent for document-level findings. */
  conceptIndex?: number;
  /** Always money in pesos (for INVALID_VAT_RATE: VAT at the declared vs the default rate). */
  declared: number;
  expected: number;
  /** declared − expected, in pesos. */
  difference: number;
  message: string;
}

export interface Reconciliation {
  docId: string;
  uuid: string;
  client: string;
  clientKind: TaxpayerKind | 'unknown';
  cancelled: boolean;
  /** SAT cancellation motive when cancelled ('01' carries the replacement UUID). */
  cancellationMotive: '01' | '02' | '03' | '04' | null;
  replacementUuid: string | null;
  /** Fiscal emission instant (epoch ms) and its Mexico City month 'YYYY-MM'. */
  date: number;
  month: string;
  paymentMethod: 'PUE' | 'PPD';
  subtotal: number;
  discount: number;
  taxableBase: number;
  freightBase: number;
  exemptAmount: number;
  /** Retention declared on non-freight subject concepts at the retention rate, accepted (practice varies). */
  accessorialRetention: number;
  vatDeclared: number;
  /** 0 for a cancelled document: it carries no tax. */
  vatExpected: number;
  retentionDeclared: number;
  /** Freight retention for company clients + accepted accessorial retention; 0 when cancelled. */
  retentionExpected: number;
  total: number;
  hasDiscrepancy: boolean;
  findings: Finding[];
}

/**
 * Freight = kind 'freight', or kind 'other' under a 78101800-family key. An
 * explicit non-freight kind (shortage, demurrage, toll…) wins over the SAT key
 * because carriers commonly bill every line under 78101802; the key is the
 * fallback for lines the back office did not classify.
 */
export function isFreightConcept(c: Pick<InvoiceConcept, 'code' | 'kind'>): boolean {
  if (c.kind === 'freight') return true;
  return c.kind === 'other' && c.code.trim().startsWith(FREIGHT_CODE_PREFIX);
}

const RATE_EPS = 1e-9;
const fmt = (pesos: number): string => pesos.toFixed(2);

export function reconcileDocument(doc: FinancialDocument, settings: ReconcileSettings): Reconciliation {
  const cancellation = invoiceCancellation(doc);
  const cancelled = cancellation !== null;
  const clientKind = taxpayerKind(doc.client);
  const tol = settings.discrepancyTolerance;
  const uuid = doc.invoice.uuid;
  const findings: Finding[] = [];
  const add = (kind: FindingKind, code: FindingCode, declared: number, expected: number, message: string, conceptIndex?: number): void => {
    findings.push({
      kind,
      code,
      docId: doc.id,
      uuid,
      ...(conceptIndex === undefined ? {} : { conceptIndex }),
      declared: round2(declared),
      expected: round2(expected),
      difference: diffCents(declared, expected),
      message,
    });
  };

  if (!isValidRfc(doc.client)) {
    add('warning', 'INVALID_CLIENT_RFC', 0, 0, `Client RFC "${doc.client}" is not a valid RFC shape; taxpayer kind taken as ${clientKind}.`);
  }

  const concepts = doc.invoice.concepts;
  const allowedRates = [...ALLOWED_VAT_RATES, settings.vatRate];
  const isAllowedRate = (r: number): boolean => allowedRates.some((a) => Math.abs(a - r) < RATE_EPS);

  let amountC = 0;
  let discountC = 0;
  let taxableC = 0;
  let freightC = 0;
  let exemptC = 0;
  let vatExpC = 0;
  let retExpC = 0;
  let accessorialRetC = 0;
  let conceptVatC = 0;
  let conceptRetC = 0;
  const freightWithoutRetention: { index: number; expected: number }[] = [];

  concepts.forEach((c, i) => {
    const baseC = toCents(c.amount) - toCents(c.discount);
    const base = fromCents(baseC);
    amountC += toCents(c.amount);
    discountC += toCents(c.discount);
    conceptVatC += toCents(c.vat);
    conceptRetC += toCents(c.retention);
    const freight = isFreightConcept(c);
    const judgeRetention = clientKind === 'company' || clientKind === 'unknown';

    if (c.objetoImp !== '02') {
      exemptC += baseC;
      add('info', 'EXEMPT_EXCLUDED', base, base,
        `Concept ${i} (${c.kind}, ObjetoImp ${c.objetoImp}) of ${fmt(base)} is not subject to VAT: excluded from the VAT and retention bases.`, i);
      if (freight) {
        add('warning', 'FREIGHT_NOT_SUBJECT', base, base, `Freight concept ${i} (${c.code}) is marked ObjetoImp ${c.objetoImp}; road freight is normally subject to VAT.`, i);
      }
      if (differsBeyond(c.vat, 0, tol)) {
        add('discrepancy', 'VAT_MISMATCH', c.vat, 0, `Concept ${i} is not subject to VAT but declares VAT ${fmt(c.vat)}.`, i);
      }
      if (judgeRetention && differsBeyond(c.retention, 0, tol)) {
        add('discrepancy', 'RETENTION_MISMATCH', c.retention, 0, `Concept ${i} is not subject to VAT but declares a retention of ${fmt(c.retention)}.`, i);
      }
      return;
    }

    // Subject concept: VAT at a valid rate.
    taxableC += baseC;
    const rateOk = isAllowedRate(c.vatRate);
    const rate = rateOk ? c.vatRate : settings.vatRate;
    const expVat = taxOn(base, rate);
    vatExpC += toCents(expVat);
    if (!rateOk) {
      add('discrepancy', 'INVALID_VAT_RATE', c.vat, expVat,
        `Concept ${i} declares VAT rate ${c.vatRate}, not one of ${allowedRates.join(', ')}; expected ${fmt(expVat)} at ${settings.vatRate}.`, i);
    } else if (differsBeyond(c.vat, expVat, tol)) {
      add('discrepancy', 'VAT_MISMATCH', c.vat, expVat, `Concept ${i}: VAT declared ${fmt(c.vat)}, expected ${fmt(expVat)} (${fmt(base)} × ${rate}).`, i);
    }

    // Retention.
    if (freight) freightC += baseC;
    const atRate = taxOn(base, settings.retentionRate);
    if (clientKind === 'unknown') {
      retExpC += toCents(c.retention); // cannot judge without the taxpayer type; INVALID_CLIENT_RFC says so
      return;
    }
    if (clientKind !== 'company') return; // person/public: expected 0, judged once per document below
    if (freight) {
      retExpC += toCents(atRate);
      if (toCents(c.retention) === 0 && toCents(atRate) !== 0) freightWithoutRetention.push({ index: i, expected: atRate });
      else if (differsBeyond(c.retention, atRate, tol)) {
        add('discrepancy', 'RETENTION_MISMATCH', c.retention, atRate,
          `Concept ${i}: retention declared ${fmt(c.retention)}, expected ${fmt(atRate)} (${fmt(base)} × ${settings.retentionRate}).`, i);
      }
    } else if (toCents(c.retention) !== 0) {
      // Accessorials (demurrage, handling) carry the 4% or not depending on practice: accept it at the right rate.
      if (!differsBeyond(c.retention, atRate, tol)) {
        retExpC += toCents(c.retention);
        accessorialRetC += toCents(c.retention);
        add('info', 'ACCESSORIAL_RETENTION', c.retention, c.retention, `Concept ${i} (${c.kind}) carries a ${settings.retentionRate} retention; accepted (practice varies for accessorials).`, i);
      } else {
        retExpC += toCents(atRate);
        add('discrepancy', 'RETENTION_MISMATCH', c.retention, atRate,
          `Concept ${i} (${c.kind}): retention declared ${fmt(c.retention)}, expected ${fmt(atRate)} at ${settings.retentionRate} if retained at all.`, i);
      }
    }
  });

  if (concepts.length === 0) {
    // Legacy documents without a concept breakdown: judge the header only.
    add('warning', 'NO_CONCEPTS', 0, 0, 'Document has no concepts: bases estimated from the header (freight = invoice.ship, exempt = iFalt).');
    freightC = toCents(doc.invoice.ship);
    exemptC = toCents(doc.iFalt);
    taxableC = toCents(doc.iSub) - toCents(doc.iDesc) - exemptC;
    vatExpC = toCents(taxOn(fromCents(taxableC), settings.vatRate));
    if (clientKind === 'company') retExpC = toCents(taxOn(fromCents(freightC), settings.retentionRate));
    else if (clientKind === 'unknown') retExpC = toCents(doc.iTax2);
    conceptVatC = toCents(doc.iTax1);
    conceptRetC = toCents(doc.iTax2);
    if (exemptC !== 0) add('info', 'EXEMPT_EXCLUDED', fromCents(exemptC), fromCents(exemptC), `Shortage deduction ${fmt(fromCents(exemptC))} excluded from the tax bases.`);
    if (differsBeyond(doc.iTax1, fromCents(vatExpC), tol)) {
      add('discrepancy', 'VAT_MISMATCH', doc.iTax1, fromCents(vatExpC), `VAT declared ${fmt(doc.iTax1)}, expected ${fmt(fromCents(vatExpC))} on a taxable base of ${fmt(fromCents(taxableC))}.`);
    }
    if (clientKind === 'company') {
      if (toCents(doc.iTax2) === 0 && retExpC !== 0) freightWithoutRetention.push({ index: -1, expected: fromCents(retExpC) });
      else if (differsBeyond(doc.iTax2, fromCents(retExpC), tol)) {
        add('discrepancy', 'RETENTION_MISMATCH', doc.iTax2, fromCents(retExpC), `Retention declared ${fmt(doc.iTax2)}, expected ${fmt(fromCents(retExpC))} on a freight base of ${fmt(fromCents(freightC))}.`);
      }
    }
  }

  // Company client: freight without retention. The whole document → one RETENTION_MISSING;
  // only some freight lines → one FREIGHT_WITHOUT_RETENTION per line.
  if (freightWithoutRetention.length > 0) {
    if (conceptRetC === 0 && toCents(doc.iTax2) === 0) {
      const expected = fromCents(freightWithoutRetention.reduce((s, f) => s + toCents(f.expected), 0));
      add('warning', 'RETENTION_MISSING', 0, expected,
        `Client ${doc.client} is a company (persona moral): it must retain ${settings.retentionRate} of the freight (LIVA art. 1-A fr. II c); no retention declared, expected ${fmt(expected)}.`);
    } else {
      for (const f of freightWithoutRetention) {
        add('warning', 'FREIGHT_WITHOUT_RETENTION', 0, f.expected, `Freight concept ${f.index} carries no retention; expected ${fmt(f.expected)} for a company client.`, f.index);
      }
    }
  }

  // Person/public client: nothing is retained.
  if ((clientKind === 'person' || clientKind === 'public') && (conceptRetC !== 0 || toCents(doc.iTax2) !== 0)) {
    const declared = toCents(doc.iTax2) !== 0 ? doc.iTax2 : fromCents(conceptRetC);
    add('warning', 'RETENTION_UNEXPECTED', declared, 0,
      `Client ${doc.client} is a ${clientKind === 'person' ? 'persona física' : 'generic public/foreign RFC'}: it retains no VAT, but ${fmt(declared)} is declared as retained.`);
  }

  // Document-level arithmetic.
  if (concepts.length > 0) {
    if (differsBeyond(doc.iSub, fromCents(amountC), tol)) add('discrepancy', 'SUBTOTAL_MISMATCH', doc.iSub, fromCents(amountC), `SubTotal ${fmt(doc.iSub)} ≠ Σ concept amounts ${fmt(fromCents(amountC))}.`);
    if (differsBeyond(doc.iDesc, fromCents(discountC), tol)) add('discrepancy', 'DISCOUNT_MISMATCH', doc.iDesc, fromCents(discountC), `Discount ${fmt(doc.iDesc)} ≠ Σ concept discounts ${fmt(fromCents(discountC))}.`);
    if (differsBeyond(doc.iTax1, fromCents(conceptVatC), tol)) add('discrepancy', 'VAT_SUM_MISMATCH', doc.iTax1, fromCents(conceptVatC), `Document VAT ${fmt(doc.iTax1)} ≠ Σ concept VAT ${fmt(fromCents(conceptVatC))}.`);
    if (differsBeyond(doc.iTax2, fromCents(conceptRetC), tol)) add('discrepancy', 'RETENTION_SUM_MISMATCH', doc.iTax2, fromCents(conceptRetC), `Document retention ${fmt(doc.iTax2)} ≠ Σ concept retention ${fmt(fromCents(conceptRetC))}.`);
  }
  const expectedTotal = fromCents(toCents(doc.iSub) - toCents(doc.iDesc) + toCents(doc.iTax1) - toCents(doc.iTax2));
  if (differsBeyond(doc.iTot, expectedTotal, tol)) {
    add('discrepancy', 'TOTAL_MISMATCH', doc.iTot, expectedTotal, `Total ${fmt(doc.iTot)} ≠ SubTotal − discount + VAT − retention = ${fmt(expectedTotal)}.`);
  }
  if (toCents(doc.iTot) < 0) add('discrepancy', 'NEGATIVE_TOTAL', doc.iTot, 0, `Total ${fmt(doc.iTot)} is negative.`);

  const result: Reconciliation = {
    docId: doc.id,
    uuid,
    client: doc.client,
    clientKind,
    cancelled,
    cancellationMotive: cancellation?.motive ?? null,
    replacementUuid: cancellation?.replacementUuid ?? null,
    date: doc.date,
    month: mxMonthKey(doc.date),
    paymentMethod: doc.invoice.paymentMethod,
    subtotal: round2(doc.iSub),
    discount: round2(doc.iDesc),
    taxableBase: fromCents(taxableC),
    freightBase: fromCents(freightC),
    exemptAmount: fromCents(exemptC),
    accessorialRetention: fromCents(accessorialRetC),
    vatDeclared: round2(doc.iTax1),
    vatExpected: fromCents(vatExpC),
    retentionDeclared: round2(doc.iTax2),
    retentionExpected: fromCents(retExpC),
    total: round2(doc.iTot),
    hasDiscrepancy: false,
    findings,
  };
  if (cancelled) {
    // A cancelled invoice carries no tax: nothing to judge, one informational finding.
    result.vatExpected = 0;
    result.retentionExpected = 0;
    result.accessorialRetention = 0;
    findings.length = 0;
    const repl = cancellation.replacementUuid ? `, replaced by ${cancellation.replacementUuid}` : '';
    add('info', 'DOCUMENT_CANCELLED', doc.iTot, 0, `Invoice cancelled (motive ${cancellation.motive}${repl}): excluded from tax totals.`);
  }
  result.hasDiscrepancy = result.findings.some((f) => f.kind === 'discrepancy');
  return result;
}

// ---------------------------------------------------------------------------
// Aggregation

export interface ReconciliationTotals {
  key: string;
  /** Non-cancelled documents, the only ones summed. */
  documents: number;
  cancelledDocuments: number;
  /** Σ Total of cancelled documents, for information only. */
  cancelledTotal: number;
  subtotal: number;
  discount: number;
  taxableBase: number;
  freightBase: number;
  exemptAmount: number;
  vatDeclared: number;
  vatExpected: number;
  /** vatDeclared − vatExpected. */
  vatDifference: number;
  retentionDeclared: number;
  retentionExpected: number;
  retentionDifference: number;
  total: number;
  discrepancies: number;
  warnings: number;
  infos: number;
  documentsWithDiscrepancies: number;
}

const SUMMED = ['subtotal', 'discount', 'taxableBase', 'freightBase', 'exemptAmount', 'vatDeclared', 'vatExpected', 'retentionDeclared', 'retentionExpected', 'total'] as const;
type SummedField = (typeof SUMMED)[number];

/** Group results by `keyFn` and sum in cents; cancelled documents are counted apart and excluded from every sum. Sorted by key. */
export function aggregateReconciliations(results: readonly Reconciliation[], keyFn: (r: Reconciliation) => string): ReconciliationTotals[] {
  interface Acc { cents: Record<SummedField, number>; cancelledC: number; documents: number; cancelled: number; d: number; w: number; i: number; withD: number }
  const groups = new Map<string, Acc>();
  for (const r of results) {
    const key = keyFn(r);
    let acc = groups.get(key);
    if (!acc) {
      const cents = Object.fromEntries(SUMMED.map((f) => [f, 0])) as Record<SummedField, number>;
      acc = { cents, cancelledC: 0, documents: 0, cancelled: 0, d: 0, w: 0, i: 0, withD: 0 };
      groups.set(key, acc);
    }
    if (r.cancelled) {
      acc.cancelled += 1;
      acc.cancelledC += toCents(r.total);
      continue;
    }
    acc.documents += 1;
    for (const f of SUMMED) acc.cents[f] += toCents(r[f]);
    for (const f of r.findings) {
      if (f.kind === 'discrepancy') acc.d += 1;
      else if (f.kind === 'warning') acc.w += 1;
      else acc.i += 1;
    }
    if (r.hasDiscrepancy) acc.withD += 1;
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, a]) => ({
      key,
      documents: a.documents,
      cancelledDocuments: a.cancelled,
      cancelledTotal: fromCents(a.cancelledC),
      subtotal: fromCents(a.cents.subtotal),
      discount: fromCents(a.cents.discount),
      taxableBase: fromCents(a.cents.taxableBase),
      freightBase: fromCents(a.cents.freightBase),
      exemptAmount: fromCents(a.cents.exemptAmount),
      vatDeclared: fromCents(a.cents.vatDeclared),
      vatExpected: fromCents(a.cents.vatExpected),
      vatDifference: fromCents(a.cents.vatDeclared - a.cents.vatExpected),
      retentionDeclared: fromCents(a.cents.retentionDeclared),
      retentionExpected: fromCents(a.cents.retentionExpected),
      retentionDifference: fromCents(a.cents.retentionDeclared - a.cents.retentionExpected),
      total: fromCents(a.cents.total),
      discrepancies: a.d,
      warnings: a.w,
      infos: a.i,
      documentsWithDiscrepancies: a.withD,
    }));
}

/** Group by Mexico City month of the invoice date (the default "month by invoice date"). */
export const byMonth = (r: Reconciliation): string => r.month;
export const byClient = (r: Reconciliation): string => r.client;

// ---------------------------------------------------------------------------
// Cash basis

export interface CashBasisShare {
  docId: string;
  uuid: string;
  paymentMethod: 'PUE' | 'PPD';
  total: number;
  /** Σ valid payment complements considered (credit notes and cancelled records excluded). */
  paidInPeriod: number;
  paymentsCount: number;
  /** The part of paidInPeriod that counts: capped cumulatively at the Total; 0 when cancelled or the total is 0. */
  counted: number;
  /** paidInPeriod / total, capped to 1 (6 decimals); 0 when total ≤ 0 or the invoice is cancelled. */
  share: number;
  /** round2(iTax1 × paid / total). */
  vat: number;
  /** round2(iTax2 × paid / total). */
  retention: number;
  reason?: string;
}

/**
 * VAT and retention attributable to payments, by the SAT proportional rule for
 * PPD invoices (Pagos 2.0: the taxes of each payment are the invoice's taxes in
 * proportion ImpPagado / Total). Balances are on the Total, already net of
 * retention, so the proportion is paid / Total. Only valid records of kind
 * 'payment' count: a credit note is a separate CFDI (type E) that adjusts VAT
 * on its own, not a collection.
 */
export function cashBasisShare(doc: FinancialDocument, paymentsInPeriod: readonly PaymentRecord[]): CashBasisShare {
  const valid = paymentsInPeriod.filter((p) => p.kind === 'payment' && !isPaymentCancelled(doc, p));
  const paidC = valid.reduce((s, p) => s + toCents(p.amount), 0);
  return shareOf(doc, paidC, valid.length, 0);
}

function shareOf(doc: FinancialDocument, paidC: number, count: number, priorPaidC: number): CashBasisShare {
  const totalC = toCents(doc.iTot);
  const base = { docId: doc.id, uuid: doc.invoice.uuid, paymentMethod: doc.invoice.paymentMethod, total: fromCents(totalC), paidInPeriod: fromCents(paidC), paymentsCount: count };
  if (invoiceCancellation(doc) !== null) return { ...base, counted: 0, share: 0, vat: 0, retention: 0, reason: 'invoice cancelled: carries no tax' };
  if (totalC <= 0) return { ...base, counted: 0, share: 0, vat: 0, retention: 0, reason: 'invoice total is 0: no proportion can be taken' };
  // Only the part of this period's payments that fits under the Total counts (overpayment carries no tax).
  const countedC = Math.max(0, Math.min(totalC, priorPaidC + paidC) - Math.min(totalC, priorPaidC));
  const ratio = countedC / totalC;
  return {
    ...base,
    counted: fromCents(countedC),
    share: Math.round(ratio * 1e6) / 1e6,
    vat: round2((doc.iTax1 * countedC) / totalC),
    retention: round2((doc.iTax2 * countedC) / totalC),
  };
}

/**
 * Cash-basis taxes of a document for a period [start, endExclusive):
 * PUE invoices are paid in one exhibition at emission, so all their taxes fall
 * in the month of the invoice date; PPD invoices count their valid payment
 * complements dated in the period, capped cumulatively at the Total.
 */
export function cashBasisForPeriod(doc: FinancialDocument, period: { start: number; endExclusive: number }): CashBasisShare {
  const inPeriod = (t: number): boolean => t >= period.start && t < period.endExclusive;
  if (doc.invoice.paymentMethod === 'PUE') {
    const paid = inPeriod(doc.date) ? toCents(doc.iTot) : 0;
    return shareOf(doc, paid, paid === 0 ? 0 : 1, 0);
  }
  const valid = doc.payments.filter((p) => p.kind === 'payment' && !isPaymentCancelled(doc, p));
  const priorC = valid.filter((p) => p.date < period.start).reduce((s, p) => s + toCents(p.amount), 0);
  const within = valid.filter((p) => inPeriod(p.date));
  const paidC = within.reduce((s, p) => s + toCents(p.amount), 0);
  return shareOf(doc, paidC, within.length, priorC);
}
