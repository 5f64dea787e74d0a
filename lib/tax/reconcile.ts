/**
 * Tax reconciliation of CFDI invoices (docs/domain.md "Tax reconciliation" and "Real CFDIs"), in
 * the document's currency (its own arithmetic; tax-totals.ts converts to MXN).
 *
 * The naive check "retention = 4% × SubTotal" raises false discrepancies when
 * an invoice carries a shortage/indemnity line (ObjetoImp 01) or an accessorial
 * line. Here every concept is placed in its own base:
 *   - freight base   = Σ (amount − discount) of subject freight concepts
 *                      (kind 'freight', or SAT 78101800 family; see isFreightConcept);
 *   - taxable base   = Σ base of subject concepts (ObjetoImp 02, or declaring taxes);
 *   - exempt amount  = Σ base of not-subject concepts (ObjetoImp 01, or 03… without taxes), `info`;
 *   - IVA bases by rate: 16%, 8%, 0% (LIVA art. 29) and exempt (art. 15) apart, all legal;
 *   - expected VAT   = Σ round2(line base × rate), rate ∈ {0.16, 0.08, 0, settings.vatRate};
 *   - expected retention = company client ? Σ round2(freight base × 4%) : 0, plus any other IVA
 *     retention as declared (at a legal rate: info; at another: a warning);
 *   - ISR retained (1.25% RESICO, 10%) and IEPS: their own arithmetic; a legal ISR rate is info.
 * Discrepancies are arithmetic only: a line against its base × rate, the header against the
 * lines (per group the rounding of their exact sum, as Anexo 20 states a CFDI's totals: lines of
 * 6 decimals each rounded first miss them by cents), Total = SubTotal − Descuento + Σ transfers −
 * Σ retentions over every tax.
 * Money comparisons are in integer cents against settings.discrepancyTolerance.
 * Totals over documents: tax-totals.ts; cash-basis taxes: cash-basis.ts.
 */
import type { CancellationStatus, ConceptTaxes, FinancialDocument, InvoiceConcept, TaxLine } from '../model/financial-document.ts';
import type { TenantSettings } from '../model/tenant-settings.ts';
import { diffCents, differsBeyond, fromCents, microsToCents, round2, taxOn, toCents, toMicros } from '../money/cents.ts';
import { MXN, rateOf } from '../money/currency.ts';
import { invoiceCancellation, invoiceCancellationRecord, recordStatus } from '../finance/cancellation.ts';
import { isValidRfc, taxpayerKind, type TaxpayerKind } from './rfc.ts';
import { conceptTaxes, isNotSubject, sameRate, taxTotalsC, zeroTaxTotalsC, type TaxTotalsC } from './tax-lines.ts';
import { mxMonthKey } from '../time/mexico-city.ts';
import { isFreightConcept } from '../model/freight-concept.ts';

export type ReconcileSettings = Pick<TenantSettings, 'vatRate' | 'retentionRate' | 'discrepancyTolerance'>;

export { FREIGHT_CODE_PREFIX, isFreightConcept } from '../model/freight-concept.ts';
/** General rate, the northern/southern border-region stimulus rate, and 0% (LIVA art. 29: exports of services, e.g. international freight). */
export const ALLOWED_VAT_RATES: readonly number[] = [0.16, 0.08, 0];

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
  | 'TAX_MISMATCH'
  | 'TAX_TOTAL_MISMATCH'
  | 'NEGATIVE_TOTAL'
  // warnings: legal/practice issues for the client type or data quality
  | 'RETENTION_MISSING'
  | 'RETENTION_UNEXPECTED'
  | 'FREIGHT_WITHOUT_RETENTION'
  | 'FREIGHT_NOT_SUBJECT'
  | 'RETENTION_RATE_UNUSUAL'
  | 'SUBJECT_WITHOUT_VAT'
  | 'INVALID_CLIENT_RFC'
  | 'NO_CONCEPTS'
  // informational
  | 'EXEMPT_EXCLUDED'
  | 'ACCESSORIAL_RETENTION'
  | 'RETENTION_AT_LEGAL_RATE'
  | 'ISR_RETAINED'
  | 'CANCELLATION_PENDING'
  | 'CANCELLATION_REJECTED'
  | 'DOCUMENT_CANCELLED';

export interface Finding {
  kind: FindingKind;
  /** Stable machine code; messages may change, codes do not. */
  code: FindingCode;
  docId: string;
  uuid: string;
  /** Index into invoice.concepts; absent for document-level findings. */
  conceptIndex?: number;
  /** Always money, in the document's currency (for INVALID_VAT_RATE: VAT at the declared vs the default rate). */
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
  /** Cancelled: its cancellation is accepted or expired (a pending or rejected one cancels nothing). */
  cancelled: boolean;
  cancellationStatus: CancellationStatus;
  /** SAT cancellation motive when cancelled ('01' carries the replacement UUID; null when only the acknowledgement is known). */
  cancellationMotive: '01' | '02' | '03' | '04' | null;
  replacementUuid: string | null;
  /** The document's currency (CFDI Moneda) and MXN per unit: every amount here is in that currency. */
  currency: string;
  exchangeRate: number;
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
  /** Freight retention for company clients + any other IVA retention as declared; 0 when cancelled. */
  retentionExpected: number;
  /** Every tax as declared by its lines, in integer cents: IVA bases by rate, ISR retained, IEPS, totals. */
  taxLinesC: TaxTotalsC;
  total: number;
  hasDiscrepancy: boolean;
  findings: Finding[];
}

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
  /** VAT and retention as declared: the rounded sums of the concepts' IVA lines per group (taxTotalsC), or the header without concepts. */
  declaredVatC: number;
  declaredRetC: number;
  /** Every tax line, summed per group as the CFDI states its totals (ISR, IEPS and the IVA bases by rate included). */
  lines: TaxTotalsC;
  /** Company client: freight carrying no retention (index −1: the header of a document without concepts). */
  freightWithoutRetention: { index: number; expected: number }[];
}

interface Judge {
  clientKind: TaxpayerKind | 'unknown';
  settings: ReconcileSettings;
  add: AddFinding;
}

/** IVA retention rates the law sets (besides the tenant's freight rate): LIVA art. 1-A, RLIVA art. 3. */
export const LEGAL_VAT_RETENTION_RATES: readonly { rate: number; why: string }[] = [
  { rate: 0.04, why: 'road freight (RLIVA art. 3 fr. II)' },
  { rate: 0.106666, why: 'two thirds of 16% by a persona física (RLIVA art. 3 fr. I)' },
  { rate: 0.106667, why: 'two thirds of 16% by a persona física (RLIVA art. 3 fr. I)' },
  { rate: 0.053333, why: 'two thirds of 8% by a persona física in the border region (RLIVA art. 3 fr. I)' },
  { rate: 0.053334, why: 'two thirds of 8% by a persona física in the border region (RLIVA art. 3 fr. I)' },
  { rate: 0.06, why: 'personnel services (LIVA art. 1-A fr. IV)' },
  { rate: 0.16, why: 'the whole IVA (LIVA art. 1-A fr. III: foreign residents, scrap)' },
];
/** ISR retention rates the law sets: RESICO persona física billing a company (LISR art. 113-J), services of a persona física (LISR art. 106, 116). */
export const LEGAL_ISR_RETENTION_RATES: readonly { rate: number; why: string }[] = [
  { rate: 0.0125, why: 'RESICO persona física billing a company (LISR art. 113-J)' },
  { rate: 0.1, why: 'services or rent of a persona física (LISR art. 106, 116)' },
];

const legalRate = (table: readonly { rate: number; why: string }[], rate: number | null) =>
  rate === null ? undefined : table.find((l) => sameRate(l.rate, rate));

/** A line's expected amount: round2(base × rate) (a Cuota is per unit of the base); 0 for Exento. */
const lineExpected = (l: TaxLine): number => (l.factor === 'Exento' || l.rate === null ? 0 : taxOn(l.base, l.rate));

/**
 * Every concept in its base, every tax line judged:
 * - not subject (ObjetoImp 01, or no tax line and not 02): the not-subject amount, info;
 * - IVA transfers: base by rate (16/8/0 %, exempt); expected = round2(base × rate) at a legal rate
 *   (16%, 8%, 0%, the tenant's), any other rate a discrepancy (INVALID_VAT_RATE);
 * - IVA retentions: freight of a company client at the retention rate (4%) against its base;
 *   any other line against its own base × rate (RETENTION_MISMATCH), its rate a legal one (info) or not (warning);
 * - ISR retentions and IEPS: amount against base × rate (TAX_MISMATCH), ISR at a legal rate info, else a warning.
 */
function conceptBases(concepts: readonly InvoiceConcept[], { clientKind, settings, add }: Judge): Bases {
  const tol = settings.discrepancyTolerance;
  const allowedRates = [...ALLOWED_VAT_RATES, settings.vatRate];
  const isAllowedRate = (r: number): boolean => allowedRates.some((a) => sameRate(a, r));
  const b: Bases = {
    amountC: 0,
    discountC: 0,
    taxableC: 0,
    freightC: 0,
    exemptC: 0,
    vatExpC: 0,
    retExpC: 0,
    accessorialRetC: 0,
    declaredVatC: 0,
    declaredRetC: 0,
    lines: zeroTaxTotalsC(),
    freightWithoutRetention: [],
  };
  const allTaxes: ConceptTaxes[] = [];
  // SubTotal and Descuento are the rounded sums of the concepts' Importe and Descuento, which may carry 6 decimals
  // (Anexo 20): added exactly, rounded once after the loop.
  let amountM = 0;
  let discountM = 0;

  concepts.forEach((c, i) => {
    const amountC = toCents(c.amount);
    const discountC = toCents(c.discount);
    const baseC = amountC - discountC;
    const base = fromCents(baseC);
    const taxes = conceptTaxes(c);
    amountM += toMicros(c.amount);
    discountM += toMicros(c.discount);
    allTaxes.push(taxes);
    // The concept's own IVA: its lines rounded (the document's totals are its groups' rounded sums, below).
    let vatC = 0;
    let retC = 0;
    for (const l of taxes.transfers) if (l.tax === 'IVA') vatC += toCents(l.amount);
    for (const l of taxes.retentions) if (l.tax === 'IVA') retC += toCents(l.amount);
    const onlyIva = taxes.transfers.every((l) => l.tax === 'IVA') && taxes.retentions.every((l) => l.tax === 'IVA');
    const ivaT = onlyIva ? taxes.transfers : taxes.transfers.filter((l) => l.tax === 'IVA');
    const ivaR = onlyIva ? taxes.retentions : taxes.retentions.filter((l) => l.tax === 'IVA');
    const freight = isFreightConcept(c);
    const judgeRetention = clientKind === 'company' || clientKind === 'unknown';

    if (isNotSubject(c)) {
      b.exemptC += baseC;
      add(
        'info',
        'EXEMPT_EXCLUDED',
        base,
        base,
        `Concept ${i} (${c.kind}, ObjetoImp ${c.objetoImp}) of ${fmt(base)} is not subject to VAT: excluded from the VAT and retention bases.`,
        i,
      );
      if (freight) {
        add(
          'warning',
          'FREIGHT_NOT_SUBJECT',
          base,
          base,
          `Freight concept ${i} (${c.code}) is marked ObjetoImp ${c.objetoImp}; road freight is normally subject to VAT.`,
          i,
        );
      }
      if (vatC !== 0 && differsBeyond(fromCents(vatC), 0, tol)) {
        add('discrepancy', 'VAT_MISMATCH', fromCents(vatC), 0, `Concept ${i} is not subject to VAT but declares VAT ${fmt(fromCents(vatC))}.`, i);
      }
      if (judgeRetention && retC !== 0 && differsBeyond(fromCents(retC), 0, tol)) {
        add(
          'discrepancy',
          'RETENTION_MISMATCH',
          fromCents(retC),
          0,
          `Concept ${i} is not subject to VAT but declares a retention of ${fmt(fromCents(retC))}.`,
          i,
        );
      }
      return;
    }

    // Subject concept: IVA at a legal rate, each line against its own base.
    b.taxableC += baseC;
    if (ivaT.length === 0 && c.objetoImp === '02') {
      add('warning', 'SUBJECT_WITHOUT_VAT', 0, 0, `Concept ${i} (${c.kind}) is subject to tax (ObjetoImp 02) but declares no IVA transfer.`, i);
    }
    for (const l of ivaT) {
      if (l.factor === 'Exento') continue;
      const rateOk = l.factor === 'Tasa' && l.rate !== null && isAllowedRate(l.rate);
      const rate = rateOk ? l.rate! : settings.vatRate;
      const expVat = taxOn(l.base, rate);
      b.vatExpC += toCents(expVat);
      if (!rateOk) {
        add(
          'discrepancy',
          'INVALID_VAT_RATE',
          l.amount,
          expVat,
          `Concept ${i} declares IVA ${l.factor === 'Tasa' ? `rate ${l.rate}` : `${l.factor} ${l.rate}`}, not one of ${allowedRates.join(', ')}; expected ${fmt(expVat)} at ${settings.vatRate}.`,
          i,
        );
      } else if (differsBeyond(l.amount, expVat, tol)) {
        add(
          'discrepancy',
          'VAT_MISMATCH',
          l.amount,
          expVat,
          `Concept ${i}: VAT declared ${fmt(l.amount)}, expected ${fmt(expVat)} (${fmt(l.base)} × ${rate}).`,
          i,
        );
      }
    }

    // IVA retentions.
    if (freight) b.freightC += baseC;
    const atRate = taxOn(base, settings.retentionRate);
    if (clientKind === 'unknown') {
      b.retExpC += retC; // cannot judge without the taxpayer type; INVALID_CLIENT_RFC says so
    } else if (clientKind === 'company') {
      // The retention is of the VAT charged (LIVA art. 1-A fr. II c): freight at 0% (international
      // transport, LIVA art. 29) or exempt carries none to retain (docs/domain.md, "Retentions").
      const vatCharged = ivaT.length === 0 || ivaT.some((l) => l.factor !== 'Exento' && l.rate !== 0);
      if (freight && !vatCharged) {
        if (retC !== 0 && differsBeyond(fromCents(retC), 0, tol)) {
          add(
            'discrepancy',
            'RETENTION_MISMATCH',
            fromCents(retC),
            0,
            `Freight concept ${i} charges no VAT (0% or exempt), so there is none to retain, but declares a retention of ${fmt(fromCents(retC))}.`,
            i,
          );
        }
      } else if (freight) {
        // Road freight retains the retention rate of its value, whoever the carrier (RLIVA art. 3 fr. II).
        b.retExpC += toCents(atRate);
        if (retC === 0 && toCents(atRate) !== 0) b.freightWithoutRetention.push({ index: i, expected: atRate });
        else if (ivaR.every((l) => l.rate !== null && sameRate(l.rate, settings.retentionRate))) {
          if (differsBeyond(fromCents(retC), atRate, tol)) {
            add(
              'discrepancy',
              'RETENTION_MISMATCH',
              fromCents(retC),
              atRate,
              `Concept ${i}: retention declared ${fmt(fromCents(retC))}, expected ${fmt(atRate)} (${fmt(base)} × ${settings.retentionRate}).`,
              i,
            );
          }
        } else {
          for (const l of ivaR) judgeLine(l, i, 'IVA retained', 'RETENTION_MISMATCH', tol, add);
          add(
            'warning',
            'RETENTION_RATE_UNUSUAL',
            fromCents(retC),
            atRate,
            `Freight concept ${i} retains IVA at ${ivaR.map((l) => l.rate).join(', ')}; road freight retains ${settings.retentionRate} (RLIVA art. 3 fr. II), ${fmt(atRate)} here.`,
            i,
          );
        }
      } else {
        for (const l of ivaR) {
          b.retExpC += toCents(l.amount);
          if (!judgeLine(l, i, 'IVA retained', 'RETENTION_MISMATCH', tol, add)) continue;
          const legal = legalRate(LEGAL_VAT_RETENTION_RATES, l.rate);
          if (l.rate !== null && sameRate(l.rate, settings.retentionRate)) {
            // Accessorials (demurrage, handling) carry the 4% or not depending on practice: accepted.
            b.accessorialRetC += toCents(l.amount);
            add(
              'info',
              'ACCESSORIAL_RETENTION',
              l.amount,
              l.amount,
              `Concept ${i} (${c.kind}) carries a ${settings.retentionRate} retention; accepted (practice varies for accessorials).`,
              i,
            );
          } else if (legal) {
            add('info', 'RETENTION_AT_LEGAL_RATE', l.amount, l.amount, `Concept ${i} (${c.kind}) retains IVA at ${l.rate}: ${legal.why}; accepted.`, i);
          } else {
            add(
              'warning',
              'RETENTION_RATE_UNUSUAL',
              l.amount,
              l.amount,
              `Concept ${i} (${c.kind}) retains IVA at ${l.rate}, a rate no rule sets for IVA retention.`,
              i,
            );
          }
        }
      }
    } // person/public: expected 0, judged once per document

    // ISR retentions and IEPS: arithmetic; the ISR rate legal or not.
    if (onlyIva) return;
    for (const l of taxes.retentions.filter((x) => x.tax === 'ISR')) {
      if (!judgeLine(l, i, 'ISR retained', 'TAX_MISMATCH', tol, add)) continue;
      const legal = legalRate(LEGAL_ISR_RETENTION_RATES, l.rate);
      if (legal) add('info', 'ISR_RETAINED', l.amount, l.amount, `Concept ${i}: ISR retained ${fmt(l.amount)} at ${l.rate} (${legal.why}).`, i);
      else
        add(
          'warning',
          'RETENTION_RATE_UNUSUAL',
          l.amount,
          l.amount,
          `Concept ${i} retains ISR at ${l.rate}, a rate no rule sets for ISR retention on a carrier's invoice.`,
          i,
        );
    }
    for (const l of [...taxes.transfers.filter((x) => x.tax !== 'IVA'), ...taxes.retentions.filter((x) => x.tax === 'IEPS')]) {
      judgeLine(l, i, l.tax, 'TAX_MISMATCH', tol, add);
    }
  });
  b.amountC = microsToCents(amountM);
  b.discountC = microsToCents(discountM);
  b.lines = taxTotalsC(allTaxes);
  b.declaredVatC = b.lines.vatTransferred;
  b.declaredRetC = b.lines.vatRetained;
  return b;
}

/** A line's amount against round2(base × rate); false (and a discrepancy) when they differ beyond the tolerance. */
function judgeLine(l: TaxLine, i: number, what: string, code: FindingCode, tol: number, add: AddFinding): boolean {
  const expected = lineExpected(l);
  if (!differsBeyond(l.amount, expected, tol)) return true;
  add('discrepancy', code, l.amount, expected, `Concept ${i}: ${what} declared ${fmt(l.amount)}, expected ${fmt(expected)} (${fmt(l.base)} × ${l.rate}).`, i);
  return false;
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
  const lines = zeroTaxTotalsC();
  lines.vatTransferred = lines.transferred = toCents(doc.iTax1);
  lines.vatRetained = lines.retained = toCents(doc.iTax2);
  // The estimated taxable base at the tenant's rate.
  const bucket = sameRate(settings.vatRate, 0.16)
    ? 'rate16'
    : sameRate(settings.vatRate, 0.08)
      ? 'rate8'
      : sameRate(settings.vatRate, 0)
        ? 'rate0'
        : 'otherRates';
  lines.vatBases[bucket] = taxableC;
  const b: Bases = {
    amountC: 0,
    discountC: 0,
    taxableC,
    freightC,
    exemptC,
    vatExpC,
    retExpC,
    accessorialRetC: 0,
    declaredVatC: toCents(doc.iTax1),
    declaredRetC: toCents(doc.iTax2),
    lines,
    freightWithoutRetention: [],
  };
  if (exemptC !== 0)
    add('info', 'EXEMPT_EXCLUDED', fromCents(exemptC), fromCents(exemptC), `Shortage deduction ${fmt(fromCents(exemptC))} excluded from the tax bases.`);
  if (differsBeyond(doc.iTax1, fromCents(vatExpC), tol)) {
    add(
      'discrepancy',
      'VAT_MISMATCH',
      doc.iTax1,
      fromCents(vatExpC),
      `VAT declared ${fmt(doc.iTax1)}, expected ${fmt(fromCents(vatExpC))} on a taxable base of ${fmt(fromCents(taxableC))}.`,
    );
  }
  if (clientKind === 'company') {
    if (toCents(doc.iTax2) === 0 && retExpC !== 0) b.freightWithoutRetention.push({ index: -1, expected: fromCents(retExpC) });
    else if (differsBeyond(doc.iTax2, fromCents(retExpC), tol)) {
      add(
        'discrepancy',
        'RETENTION_MISMATCH',
        doc.iTax2,
        fromCents(retExpC),
        `Retention declared ${fmt(doc.iTax2)}, expected ${fmt(fromCents(retExpC))} on a freight base of ${fmt(fromCents(freightC))}.`,
      );
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
      add(
        'warning',
        'RETENTION_MISSING',
        0,
        expected,
        `Client ${doc.client} is a company (persona moral): it must retain ${settings.retentionRate} of the freight (LIVA art. 1-A fr. II c); no retention declared, expected ${fmt(expected)}.`,
      );
    } else {
      for (const f of b.freightWithoutRetention) {
        add(
          'warning',
          'FREIGHT_WITHOUT_RETENTION',
          0,
          f.expected,
          `Freight concept ${f.index} carries no retention; expected ${fmt(f.expected)} for a company client.`,
          f.index,
        );
      }
    }
  }
  if ((clientKind === 'person' || clientKind === 'public') && (b.declaredRetC !== 0 || toCents(doc.iTax2) !== 0 || b.lines.isrRetained !== 0)) {
    const vat = toCents(doc.iTax2) !== 0 ? toCents(doc.iTax2) : b.declaredRetC;
    const declared = fromCents(vat + b.lines.isrRetained);
    add(
      'warning',
      'RETENTION_UNEXPECTED',
      declared,
      0,
      `Client ${doc.client} is a ${clientKind === 'person' ? 'persona física' : 'generic public/foreign RFC'}: it retains no tax, but ${fmt(declared)} is declared as retained${b.lines.isrRetained !== 0 ? ` (ISR ${fmt(fromCents(b.lines.isrRetained))})` : ''}.`,
    );
  }
}

/**
 * The header against the concepts (when there are any) and Total = SubTotal − discount + Σ
 * transfers − Σ retentions over every tax: the CFDI's own document totals when stored, else its
 * IVA header (iTax1, iTax2) plus the lines of the other taxes; and the local taxes when it has them.
 */
function judgeArithmetic(doc: FinancialDocument, b: Bases, hasConcepts: boolean, tol: number, add: AddFinding): void {
  if (hasConcepts) {
    if (differsBeyond(doc.iSub, fromCents(b.amountC), tol))
      add('discrepancy', 'SUBTOTAL_MISMATCH', doc.iSub, fromCents(b.amountC), `SubTotal ${fmt(doc.iSub)} ≠ Σ concept amounts ${fmt(fromCents(b.amountC))}.`);
    if (differsBeyond(doc.iDesc, fromCents(b.discountC), tol))
      add(
        'discrepancy',
        'DISCOUNT_MISMATCH',
        doc.iDesc,
        fromCents(b.discountC),
        `Discount ${fmt(doc.iDesc)} ≠ Σ concept discounts ${fmt(fromCents(b.discountC))}.`,
      );
    if (differsBeyond(doc.iTax1, fromCents(b.declaredVatC), tol))
      add(
        'discrepancy',
        'VAT_SUM_MISMATCH',
        doc.iTax1,
        fromCents(b.declaredVatC),
        `Document VAT ${fmt(doc.iTax1)} ≠ Σ concept VAT ${fmt(fromCents(b.declaredVatC))}.`,
      );
    if (differsBeyond(doc.iTax2, fromCents(b.declaredRetC), tol))
      add(
        'discrepancy',
        'RETENTION_SUM_MISMATCH',
        doc.iTax2,
        fromCents(b.declaredRetC),
        `Document retention ${fmt(doc.iTax2)} ≠ Σ concept retention ${fmt(fromCents(b.declaredRetC))}.`,
      );
    if (doc.taxTotals) {
      for (const [what, declared, lines] of [
        ['transferred', doc.taxTotals.transferred, b.lines.transferred],
        ['retained', doc.taxTotals.retained, b.lines.retained],
      ] as const) {
        if (differsBeyond(declared, fromCents(lines), tol)) {
          add(
            'discrepancy',
            'TAX_TOTAL_MISMATCH',
            declared,
            fromCents(lines),
            `Document total of taxes ${what} ${fmt(declared)} ≠ Σ concept taxes ${what} ${fmt(fromCents(lines))}.`,
          );
        }
      }
    }
  }
  const otherTaxesC = b.lines.transferred - b.lines.vatTransferred - (b.lines.retained - b.lines.vatRetained);
  const taxesC = doc.taxTotals ? toCents(doc.taxTotals.transferred) - toCents(doc.taxTotals.retained) : toCents(doc.iTax1) - toCents(doc.iTax2) + otherTaxesC;
  // State taxes (the implocal complement) sit outside Impuestos, and the Total holds them too.
  const localC = doc.localTaxes ? toCents(doc.localTaxes.transferred) - toCents(doc.localTaxes.retained) : 0;
  const expectedTotal = fromCents(toCents(doc.iSub) - toCents(doc.iDesc) + taxesC + localC);
  if (differsBeyond(doc.iTot, expectedTotal, tol)) {
    add(
      'discrepancy',
      'TOTAL_MISMATCH',
      doc.iTot,
      expectedTotal,
      `Total ${fmt(doc.iTot)} ≠ SubTotal − discount + transferred − retained taxes${doc.localTaxes ? ' + local taxes transferred − retained' : ''} = ${fmt(expectedTotal)}.`,
    );
  }
  if (toCents(doc.iTot) < 0) add('discrepancy', 'NEGATIVE_TOTAL', doc.iTot, 0, `Total ${fmt(doc.iTot)} is negative.`);
}

export function reconcileDocument(doc: FinancialDocument, settings: ReconcileSettings): Reconciliation {
  const cancellation = invoiceCancellation(doc);
  const ownRecord = invoiceCancellationRecord(doc);
  const cancellationStatus = ownRecord === null ? 'none' : recordStatus(ownRecord);
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
    cancellationStatus,
    cancellationMotive: cancellation?.motive ?? null,
    replacementUuid: cancellation?.replacementUuid ?? null,
    currency: doc.currency ?? MXN,
    exchangeRate: rateOf(doc),
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
    taxLinesC: b.lines,
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
    const how = cancellationStatus === 'expired' ? ', tacitly accepted' : '';
    add('info', 'DOCUMENT_CANCELLED', doc.iTot, 0, `Invoice cancelled (motive ${cancellation.motive ?? 'not known'}${repl}${how}): excluded from tax totals.`);
  } else if (cancellationStatus === 'pending') {
    add(
      'info',
      'CANCELLATION_PENDING',
      doc.iTot,
      doc.iTot,
      'A cancellation of this invoice is pending (requested, not in effect): it stays in the tax totals until the SAT cancels it.',
    );
  } else if (cancellationStatus === 'rejected') {
    add('info', 'CANCELLATION_REJECTED', doc.iTot, doc.iTot, 'The receiver rejected the cancellation of this invoice: it stays valid and in the tax totals.');
  }
  result.hasDiscrepancy = result.findings.some((f) => f.kind === 'discrepancy');
  return result;
}
