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
 * Totals over documents: tax-totals.ts; cash-basis taxes: cash-basis.ts.
 */
import type { FinancialDocument, InvoiceConcept } from '../model/financial-document.ts';
import type { TenantSettings } from '../model/tenant-settings.ts';
import { diffCents, differsBeyond, fromCents, round2, taxOn, toCents } from '../money/cents.ts';
import { invoiceCancellation } from '../finance/cancellation.ts';
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

type AddFinding = (kind: FindingKind, code: FindingCode, declared: number, expected: number, message: string, conceptIndex?: number) => void;

/** Findings of one document, in the order they are raised. */
function findingsOf(doc: Pick<FinancialDocument, 'id' | 'invoice'>): { findings: Finding[]; add: AddFinding } {
  const findings: Finding[] = [];
  const add: AddFinding = (kind, code, declared, expected, message, conceptIndex) => {
    findings.push({
      kind,
      code,
      docId: doc.id,
      uuid: doc.invoice.uuid,
      ...(conceptIndex === undefined ? {} : { conceptIndex }),
      declared: round2(declared),
      expected: round2(expected),
      difference: diffCents(declared, expected),
      message,
    });
  };
  return { findings, add };
}

/** The bases and expected taxes of a document, in integer cents. */
interface Bases {
  amountC: number;
  discountC: number;
  taxableC: number;
  freightC: number;
  exemptC: number;
  vatExpC: number;
  retExpC: number;
  accessorialRetC: number;
  /** Σ VAT and retention as declared (per concept, or the header without concepts). */
  declaredVatC: number;
  declaredRetC: number;
  /** Company client: freight carrying no retention (index −1: the header of a document without concepts). */
  freightWithoutRetention: { index: number; expected: number }[];
}

interface Judge {
  clientKind: TaxpayerKind | 'unknown';
  settings: ReconcileSettings;
  add: AddFinding;
}

/** Every concept in its base: exempt (ObjetoImp ≠ 02), VAT at a valid rate, freight retention for company clients. */
function conceptBases(concepts: readonly InvoiceConcept[], { clientKind, settings, add }: Judge): Bases {
  const tol = settings.discrepancyTolerance;
  const allowedRates = [...ALLOWED_VAT_RATES, settings.vatRate];
  const isAllowedRate = (r: number): boolean => allowedRates.some((a) => Math.abs(a - r) < RATE_EPS);
  const b: Bases = { amountC: 0, discountC: 0, taxableC: 0, freightC: 0, exemptC: 0, vatExpC: 0, retExpC: 0, accessorialRetC: 0, declaredVatC: 0, declaredRetC: 0, freightWithoutRetention: [] };

  concepts.forEach((c, i) => {
    const baseC = toCents(c.amount) - toCents(c.discount);
    const base = fromCents(baseC);
    b.amountC += toCents(c.amount);
    b.discountC += toCents(c.discount);
    b.declaredVatC += toCents(c.vat);
    b.declaredRetC += toCents(c.retention);
    const freight = isFreightConcept(c);
    const judgeRetention = clientKind === 'company' || clientKind === 'unknown';

    if (c.objetoImp !== '02') {
      b.exemptC += baseC;
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
    b.taxableC += baseC;
    const rateOk = isAllowedRate(c.vatRate);
    const rate = rateOk ? c.vatRate : settings.vatRate;
    const expVat = taxOn(base, rate);
    b.vatExpC += toCents(expVat);
    if (!rateOk) {
      add('discrepancy', 'INVALID_VAT_RATE', c.vat, expVat,
        `Concept ${i} declares VAT rate ${c.vatRate}, not one of ${allowedRates.join(', ')}; expected ${fmt(expVat)} at ${settings.vatRate}.`, i);
    } else if (differsBeyond(c.vat, expVat, tol)) {
      add('discrepancy', 'VAT_MISMATCH', c.vat, expVat, `Concept ${i}: VAT declared ${fmt(c.vat)}, expected ${fmt(expVat)} (${fmt(base)} × ${rate}).`, i);
    }

    // Retention.
    if (freight) b.freightC += baseC;
    const atRate = taxOn(base, settings.retentionRate);
    if (clientKind === 'unknown') {
      b.retExpC += toCents(c.retention); // cannot judge without the taxpayer type; INVALID_CLIENT_RFC says so
      return;
    }
    if (clientKind !== 'company') return; // person/public: expected 0, judged once per document
    if (freight) {
      b.retExpC += toCents(atRate);
      if (toCents(c.retention) === 0 && toCents(atRate) !== 0) b.freightWithoutRetention.push({ index: i, expected: atRate });
      else if (differsBeyond(c.retention, atRate, tol)) {
        add('discrepancy', 'RETENTION_MISMATCH', c.retention, atRate,
          `Concept ${i}: retention declared ${fmt(c.retention)}, expected ${fmt(atRate)} (${fmt(base)} × ${settings.retentionRate}).`, i);
      }
    } else if (toCents(c.retention) !== 0) {
      // Accessorials (demurrage, handling) carry the 4% or not depending on practice: accept it at the right rate.
      if (!differsBeyond(c.retention, atRate, tol)) {
        b.retExpC += toCents(c.retention);
        b.accessorialRetC += toCents(c.retention);
        add('info', 'ACCESSORIAL_RETENTION', c.retention, c.retention, `Concept ${i} (${c.kind}) carries a ${settings.retentionRate} retention; accepted (practice varies for accessorials).`, i);
      } else {
        b.retExpC += toCents(atRate);
        add('discrepancy', 'RETENTION_MISMATCH', c.retention, atRate,
          `Concept ${i} (${c.kind}): retention declared ${fmt(c.retention)}, expected ${fmt(atRate)} at ${settings.retentionRate} if retained at all.`, i);
      }
    }
  });
  return b;
}

/** Legacy documents without a concept breakdown: bases estimated from the header, the header judged. */
function headerBases(doc: FinancialDocument, { clientKind, settings, add }: Judge): Bases {
  const tol = settings.discrepancyTolerance;
  add('warning', 'NO_CONCEPTS', 0, 0, 'Document has no concepts: bases estimated from the header (freight = invoice.ship, exempt = iFalt).');
  const freightC = toCents(doc.invoice.ship);
  const exemptC = toCents(doc.iFalt);
  const taxableC = toCents(doc.iSub) - toCents(doc.iDesc) - exemptC;
  const vatExpC = toCents(taxOn(fromCents(taxableC), settings.vatRate));
  const retExpC = clientKind === 'company' ? toCents(taxOn(fromCents(freightC), settings.retentionRate)) : clientKind === 'unknown' ? toCents(doc.iTax2) : 0;
  const b: Bases = {
    amountC: 0, discountC: 0, taxableC, freightC, exemptC, vatExpC, retExpC, accessorialRetC: 0,
    declaredVatC: toCents(doc.iTax1), declaredRetC: toCents(doc.iTax2), freightWithoutRetention: [],
  };
  if (exemptC !== 0) add('info', 'EXEMPT_EXCLUDED', fromCents(exemptC), fromCents(exemptC), `Shortage deduction ${fmt(fromCents(exemptC))} excluded from the tax bases.`);
  if (differsBeyond(doc.iTax1, fromCents(vatExpC), tol)) {
    add('discrepancy', 'VAT_MISMATCH', doc.iTax1, fromCents(vatExpC), `VAT declared ${fmt(doc.iTax1)}, expected ${fmt(fromCents(vatExpC))} on a taxable base of ${fmt(fromCents(taxableC))}.`);
  }
  if (clientKind === 'company') {
    if (toCents(doc.iTax2) === 0 && retExpC !== 0) b.freightWithoutRetention.push({ index: -1, expected: fromCents(retExpC) });
    else if (differsBeyond(doc.iTax2, fromCents(retExpC), tol)) {
      add('discrepancy', 'RETENTION_MISMATCH', doc.iTax2, fromCents(retExpC), `Retention declared ${fmt(doc.iTax2)}, expected ${fmt(fromCents(retExpC))} on a freight base of ${fmt(fromCents(freightC))}.`);
    }
  }
  return b;
}

/**
 * Retention by client type. Company client with freight carrying none: the
 * whole document → one RETENTION_MISSING, only some lines → one
 * FREIGHT_WITHOUT_RETENTION per line. Person/public client: nothing is retained.
 */
function judgeRetentionByClient(doc: FinancialDocument, b: Bases, { clientKind, settings, add }: Judge): void {
  if (b.freightWithoutRetention.length > 0) {
    if (b.declaredRetC === 0 && toCents(doc.iTax2) === 0) {
      const expected = fromCents(b.freightWithoutRetention.reduce((s, f) => s + toCents(f.expected), 0));
      add('warning', 'RETENTION_MISSING', 0, expected,
        `Client ${doc.client} is a company (persona moral): it must retain ${settings.retentionRate} of the freight (LIVA art. 1-A fr. II c); no retention declared, expected ${fmt(expected)}.`);
    } else {
      for (const f of b.freightWithoutRetention) {
        add('warning', 'FREIGHT_WITHOUT_RETENTION', 0, f.expected, `Freight concept ${f.index} carries no retention; expected ${fmt(f.expected)} for a company client.`, f.index);
      }
    }
  }
  if ((clientKind === 'person' || clientKind === 'public') && (b.declaredRetC !== 0 || toCents(doc.iTax2) !== 0)) {
    const declared = toCents(doc.iTax2) !== 0 ? doc.iTax2 : fromCents(b.declaredRetC);
    add('warning', 'RETENTION_UNEXPECTED', declared, 0,
      `Client ${doc.client} is a ${clientKind === 'person' ? 'persona física' : 'generic public/foreign RFC'}: it retains no VAT, but ${fmt(declared)} is declared as retained.`);
  }
}

/** The header against the concepts (when there are any) and Total = SubTotal − discount + VAT − retention. */
function judgeArithmetic(doc: FinancialDocument, b: Bases, hasConcepts: boolean, tol: number, add: AddFinding): void {
  if (hasConcepts) {
    if (differsBeyond(doc.iSub, fromCents(b.amountC), tol)) add('discrepancy', 'SUBTOTAL_MISMATCH', doc.iSub, fromCents(b.amountC), `SubTotal ${fmt(doc.iSub)} ≠ Σ concept amounts ${fmt(fromCents(b.amountC))}.`);
    if (differsBeyond(doc.iDesc, fromCents(b.discountC), tol)) add('discrepancy', 'DISCOUNT_MISMATCH', doc.iDesc, fromCents(b.discountC), `Discount ${fmt(doc.iDesc)} ≠ Σ concept discounts ${fmt(fromCents(b.discountC))}.`);
    if (differsBeyond(doc.iTax1, fromCents(b.declaredVatC), tol)) add('discrepancy', 'VAT_SUM_MISMATCH', doc.iTax1, fromCents(b.declaredVatC), `Document VAT ${fmt(doc.iTax1)} ≠ Σ concept VAT ${fmt(fromCents(b.declaredVatC))}.`);
    if (differsBeyond(doc.iTax2, fromCents(b.declaredRetC), tol)) add('discrepancy', 'RETENTION_SUM_MISMATCH', doc.iTax2, fromCents(b.declaredRetC), `Document retention ${fmt(doc.iTax2)} ≠ Σ concept retention ${fmt(fromCents(b.declaredRetC))}.`);
  }
  const expectedTotal = fromCents(toCents(doc.iSub) - toCents(doc.iDesc) + toCents(doc.iTax1) - toCents(doc.iTax2));
  if (differsBeyond(doc.iTot, expectedTotal, tol)) {
    add('discrepancy', 'TOTAL_MISMATCH', doc.iTot, expectedTotal, `Total ${fmt(doc.iTot)} ≠ SubTotal − discount + VAT − retention = ${fmt(expectedTotal)}.`);
  }
  if (toCents(doc.iTot) < 0) add('discrepancy', 'NEGATIVE_TOTAL', doc.iTot, 0, `Total ${fmt(doc.iTot)} is negative.`);
}

export function reconcileDocument(doc: FinancialDocument, settings: ReconcileSettings): Reconciliation {
  const cancellation = invoiceCancellation(doc);
  const clientKind = taxpayerKind(doc.client);
  const { findings, add } = findingsOf(doc);
  const judge: Judge = { clientKind, settings, add };

  if (!isValidRfc(doc.client)) {
    add('warning', 'INVALID_CLIENT_RFC', 0, 0, `Client RFC "${doc.client}" is not a valid RFC shape; taxpayer kind taken as ${clientKind}.`);
  }
  const concepts = doc.invoice.concepts;
  const b = concepts.length > 0 ? conceptBases(concepts, judge) : headerBases(doc, judge);
  judgeRetentionByClient(doc, b, judge);
  judgeArithmetic(doc, b, concepts.length > 0, settings.discrepancyTolerance, add);

  const result: Reconciliation = {
    docId: doc.id,
    uuid: doc.invoice.uuid,
    client: doc.client,
    clientKind,
    cancelled: cancellation !== null,
    cancellationMotive: cancellation?.motive ?? null,
    replacementUuid: cancellation?.replacementUuid ?? null,
    date: doc.date,
    month: mxMonthKey(doc.date),
    paymentMethod: doc.invoice.paymentMethod,
    subtotal: round2(doc.iSub),
    discount: round2(doc.iDesc),
    taxableBase: fromCents(b.taxableC),
    freightBase: fromCents(b.freightC),
    exemptAmount: fromCents(b.exemptC),
    accessorialRetention: fromCents(b.accessorialRetC),
    vatDeclared: round2(doc.iTax1),
    vatExpected: fromCents(b.vatExpC),
    retentionDeclared: round2(doc.iTax2),
    retentionExpected: fromCents(b.retExpC),
    total: round2(doc.iTot),
    hasDiscrepancy: false,
    findings,
  };
  if (cancellation !== null) {
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
