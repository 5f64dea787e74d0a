/**
 * Totals of the tax summary (docs/domain.md "Tax reconciliation"), built
 * incrementally so a year of invoices streams through without being held in
 * memory. Every amount is accumulated in integer cents.
 *
 * Invoice basis: a document contributes once, to the month of its invoice
 * date, with the amounts of its reconciliation (reconcileDocument).
 * Payment (cash) basis: a document contributes to every month in which
 * payments that count fall (cashBasisForPeriod: PUE at the invoice date, PPD by
 * its valid payment complements, capped at the Total), with each amount
 * scaled by counted ÷ Total (the SAT proportional rule of Pagos 2.0), taken as
 * the month's part of the running total (what was counted up to its end, less
 * what was counted before it), so a fully paid invoice's months add up to its
 * amounts exactly; declared VAT and retention are cashBasisForPeriod's own
 * proportional amounts, taken the same way.
 * Cancelled documents contribute no amount: they are counted apart
 * (cancelledDocuments, cancelledTotal). A document's findings are counted once,
 * in the first month it contributes to.
 *
 * Every amount is in MXN: a document in another currency is reconciled in its own
 * currency and each of its amounts converted at its exchange rate (on the payment
 * basis, at the rate of the payments counted), rounded to cents.
 */
import type { FinancialDocument } from '../model/financial-document.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { centsToMxnCents } from '../money/currency.ts';
import { isNotSubject } from './tax-lines.ts';
import type { TaxpayerKind } from './rfc.ts';
import { cashBasisForPeriod } from './cash-basis.ts';
import type { FindingKind, Reconciliation } from './reconcile.ts';

export const FIELDS = [
  'subtotal',
  'discount',
  'taxableBase',
  'freightBase',
  'exemptShortage',
  'exemptIndemnity',
  'exemptOther',
  'vatDeclared',
  'vatExpected',
  'retentionDeclared',
  'retentionExpected',
  'total',
  'collected',
  'vatBase16',
  'vatBase8',
  'vatBase0',
  'vatBaseExempt',
  'vatBaseOther',
  'isrRetained',
  'iepsTransferred',
  'iepsRetained',
  'transferredTaxes',
  'retainedTaxes',
] as const;
export type AmountField = (typeof FIELDS)[number];
export type AmountsC = Record<AmountField, number>;

/**
 * fn applied to every field, into a new record. Written out like addAmounts: this runs for each
 * document and month slice of a summary.
 */
export function mapAmounts(a: AmountsC, fn: (cents: number) => number): AmountsC {
  return {
    subtotal: fn(a.subtotal),
    discount: fn(a.discount),
    taxableBase: fn(a.taxableBase),
    freightBase: fn(a.freightBase),
    exemptShortage: fn(a.exemptShortage),
    exemptIndemnity: fn(a.exemptIndemnity),
    exemptOther: fn(a.exemptOther),
    vatDeclared: fn(a.vatDeclared),
    vatExpected: fn(a.vatExpected),
    retentionDeclared: fn(a.retentionDeclared),
    retentionExpected: fn(a.retentionExpected),
    total: fn(a.total),
    collected: fn(a.collected),
    vatBase16: fn(a.vatBase16),
    vatBase8: fn(a.vatBase8),
    vatBase0: fn(a.vatBase0),
    vatBaseExempt: fn(a.vatBaseExempt),
    vatBaseOther: fn(a.vatBaseOther),
    isrRetained: fn(a.isrRetained),
    iepsTransferred: fn(a.iepsTransferred),
    iepsRetained: fn(a.iepsRetained),
    transferredTaxes: fn(a.transferredTaxes),
    retainedTaxes: fn(a.retainedTaxes),
  };
}

const ZERO = Object.freeze(Object.fromEntries(FIELDS.map((f) => [f, 0])) as AmountsC);
const zeroAmounts = (): AmountsC => ({ ...ZERO });

/**
 * into += from, field by field. Written out (not a loop over FIELDS): each document adds its
 * amounts to three accumulators, and a keyed loop made this the hottest line of a year's summary.
 * test/unit/tax-totals.test.ts checks that every field of FIELDS is added.
 */
export function addAmounts(into: AmountsC, from: AmountsC): void {
  into.subtotal += from.subtotal;
  into.discount += from.discount;
  into.taxableBase += from.taxableBase;
  into.freightBase += from.freightBase;
  into.exemptShortage += from.exemptShortage;
  into.exemptIndemnity += from.exemptIndemnity;
  into.exemptOther += from.exemptOther;
  into.vatDeclared += from.vatDeclared;
  into.vatExpected += from.vatExpected;
  into.retentionDeclared += from.retentionDeclared;
  into.retentionExpected += from.retentionExpected;
  into.total += from.total;
  into.collected += from.collected;
  into.vatBase16 += from.vatBase16;
  into.vatBase8 += from.vatBase8;
  into.vatBase0 += from.vatBase0;
  into.vatBaseExempt += from.vatBaseExempt;
  into.vatBaseOther += from.vatBaseOther;
  into.isrRetained += from.isrRetained;
  into.iepsTransferred += from.iepsTransferred;
  into.iepsRetained += from.iepsRetained;
  into.transferredTaxes += from.transferredTaxes;
  into.retainedTaxes += from.retainedTaxes;
}

export interface TaxContribution {
  docId: string;
  /** Invoice emission instant: the client's name is the one on its latest document. */
  dateMs: number;
  month: string;
  client: string;
  clientName: string;
  clientKind: TaxpayerKind | 'unknown';
  cancelled: boolean;
  /** A cancellation of it is pending (it still counts). */
  cancellationPending: boolean;
  /** MXN cents; the invoice Total of a cancelled document (information only). */
  cancelledTotalC: number;
  /** MXN cents; all zero for a cancelled document. */
  amounts: AmountsC;
  /** Findings of the document, counted only on its first contribution and never for a cancelled one. */
  findings: Record<FindingKind, number>;
  hasDiscrepancy: boolean;
  /** First contribution of this document (documents and findings are counted here in the overall totals). */
  first: boolean;
}

/** Not-subject amounts (ObjetoImp 01, or 03… without taxes) by what they are: shortage, indemnity, anything else (cents). */
export function exemptBreakdownC(
  doc: Pick<FinancialDocument, 'invoice' | 'iFalt'>,
  r: Pick<Reconciliation, 'exemptAmount'>,
): { shortage: number; indemnity: number; other: number } {
  const concepts = doc.invoice.concepts ?? [];
  // Without concepts the reconciliation takes iFalt (the shortage deduction) as the exempt amount.
  if (concepts.length === 0) return { shortage: toCents(r.exemptAmount), indemnity: 0, other: 0 };
  const out = { shortage: 0, indemnity: 0, other: 0 };
  for (const c of concepts) {
    if (!isNotSubject(c)) continue;
    const baseC = toCents(c.amount) - toCents(c.discount);
    if (c.kind === 'shortage') out.shortage += baseC;
    else if (c.kind === 'indemnity') out.indemnity += baseC;
    else out.other += baseC;
  }
  return out;
}

function findingCounts(r: Reconciliation): Record<FindingKind, number> {
  const out: Record<FindingKind, number> = { discrepancy: 0, warning: 0, info: 0 };
  for (const f of r.findings) out[f.kind] += 1;
  return out;
}

/** Every amount of a document, in cents of its own currency. */
function fullAmountsC(doc: FinancialDocument, r: Reconciliation): AmountsC {
  const ex = exemptBreakdownC(doc, r);
  const l = r.taxLinesC;
  return {
    subtotal: toCents(r.subtotal),
    discount: toCents(r.discount),
    taxableBase: toCents(r.taxableBase),
    freightBase: toCents(r.freightBase),
    exemptShortage: ex.shortage,
    exemptIndemnity: ex.indemnity,
    exemptOther: ex.other,
    vatDeclared: toCents(r.vatDeclared),
    vatExpected: toCents(r.vatExpected),
    retentionDeclared: toCents(r.retentionDeclared),
    retentionExpected: toCents(r.retentionExpected),
    total: toCents(r.total),
    collected: 0,
    vatBase16: l.vatBases.rate16,
    vatBase8: l.vatBases.rate8,
    vatBase0: l.vatBases.rate0,
    vatBaseExempt: l.vatBases.exempt,
    vatBaseOther: l.vatBases.otherRates,
    isrRetained: l.isrRetained,
    iepsTransferred: l.iepsTransferred,
    iepsRetained: l.iepsRetained,
    transferredTaxes: l.transferred,
    retainedTaxes: l.retained,
  };
}

/** Amounts of the document's currency in MXN cents at `rate` (each field converted and rounded on its own). */
function inMxn(a: AmountsC, rate: number): AmountsC {
  if (rate === 1) return a;
  return mapAmounts(a, (c) => centsToMxnCents(c, rate));
}

function contribution(doc: FinancialDocument, r: Reconciliation, month: string, amounts: AmountsC, first: boolean): TaxContribution {
  return {
    docId: r.docId,
    dateMs: doc.date,
    month,
    client: r.client,
    clientName: doc.clientName ?? '',
    clientKind: r.clientKind,
    cancelled: r.cancelled,
    cancellationPending: r.cancellationStatus === 'pending',
    cancelledTotalC: r.cancelled ? centsToMxnCents(toCents(r.total), r.exchangeRate) : 0,
    amounts: r.cancelled ? zeroAmounts() : amounts,
    // A cancelled document's findings (DOCUMENT_CANCELLED) are not summed.
    findings: first && !r.cancelled ? findingCounts(r) : { discrepancy: 0, warning: 0, info: 0 },
    hasDiscrepancy: first && r.hasDiscrepancy,
    first,
  };
}

/** Invoice basis: the whole document in the month of its invoice date. */
export function invoiceBasisContribution(doc: FinancialDocument, r: Reconciliation): TaxContribution {
  return contribution(doc, r, r.month, inMxn(fullAmountsC(doc, r), r.exchangeRate), true);
}

/**
 * Payment basis: one contribution per month slice ([start, endExclusive), in
 * order) in which payments that count fall. A cancelled document contributes
 * once (for the count), to the first slice it was selected by.
 */
export function paymentBasisContributions(
  doc: FinancialDocument,
  r: Reconciliation,
  slices: readonly { month: string; start: number; endExclusive: number }[],
): TaxContribution[] {
  const out: TaxContribution[] = [];
  if (r.cancelled) {
    const inSlice = (t: number) => slices.find((s) => t >= s.start && t < s.endExclusive);
    const hit = inSlice(doc.date) ?? doc.payments.map((p) => inSlice(p.date)).find((s) => s !== undefined) ?? slices[0];
    return hit ? [contribution(doc, r, hit.month, zeroAmounts(), true)] : [];
  }
  const full = fullAmountsC(doc, r);
  const totalC = toCents(r.total);
  for (const slice of slices) {
    const share = cashBasisForPeriod(doc, slice);
    const countedC = toCents(share.counted);
    if (countedC <= 0 || totalC <= 0) continue;
    // The slice's part of the running total (as cashBasisForPeriod's VAT): the slices of a fully paid invoice add up
    // to its amounts exactly, however its payments split it.
    const beforeC = toCents(share.countedBefore);
    const afterC = beforeC + countedC;
    const scale = (cents: number): number => toCents((fromCents(cents) * afterC) / totalC) - toCents((fromCents(cents) * beforeC) / totalC);
    const amounts = mapAmounts(full, scale);
    amounts.vatDeclared = toCents(share.vat);
    amounts.retentionDeclared = toCents(share.retention);
    amounts.total = countedC;
    amounts.collected = countedC;
    out.push(contribution(doc, r, slice.month, inMxn(amounts, share.exchangeRate), out.length === 0));
  }
  return out;
}

// ---------------------------------------------------------------------------
// Accumulation

export interface TaxTotals {
  documents: number;
  cancelledDocuments: number;
  cancelledTotal: number;
  /** Documents summed whose cancellation is pending (requested, not in effect). */
  pendingCancellations: number;
  subtotal: number;
  discount: number;
  taxableBase: number;
  freightBase: number;
  exempt: { total: number; shortage: number; indemnity: number; other: number };
  vat: { declared: number; expected: number; difference: number };
  retention: { declared: number; expected: number; difference: number };
  vatBases: { rate16: number; rate8: number; rate0: number; exempt: number; otherRates: number };
  isrRetained: number;
  ieps: { transferred: number; retained: number };
  transferredTaxes: number;
  retainedTaxes: number;
  total: number;
  /** Payment basis: Σ payments that count (capped at each Total); null on the invoice basis. */
  collected: number | null;
  findings: { discrepancies: number; warnings: number; infos: number };
  documentsWithDiscrepancies: number;
}

/** What an Acc has counted, as stored in a day's totals (tax-day-rollup.ts): every field adds. */
export interface TaxAccState {
  documents: number;
  cancelled: number;
  cancelledC: number;
  pending: number;
  amounts: AmountsC;
  findings: Record<FindingKind, number>;
  withDiscrepancy: number;
}

export class Acc {
  documents = 0;
  cancelled = 0;
  cancelledC = 0;
  pending = 0;
  amounts = zeroAmounts();
  findings: Record<FindingKind, number> = { discrepancy: 0, warning: 0, info: 0 };
  withDiscrepancy = 0;

  add(c: TaxContribution, countDocument: boolean): void {
    if (countDocument) {
      if (c.cancelled) {
        this.cancelled += 1;
        this.cancelledC += c.cancelledTotalC;
      } else this.documents += 1;
      if (c.cancellationPending) this.pending += 1;
    }
    addAmounts(this.amounts, c.amounts);
    this.findings.discrepancy += c.findings.discrepancy;
    this.findings.warning += c.findings.warning;
    this.findings.info += c.findings.info;
    if (c.hasDiscrepancy) this.withDiscrepancy += 1;
  }

  merge(s: TaxAccState): void {
    this.documents += s.documents;
    this.cancelled += s.cancelled;
    this.cancelledC += s.cancelledC;
    this.pending += s.pending;
    addAmounts(this.amounts, s.amounts);
    this.findings.discrepancy += s.findings.discrepancy;
    this.findings.warning += s.findings.warning;
    this.findings.info += s.findings.info;
    this.withDiscrepancy += s.withDiscrepancy;
  }

  state(): TaxAccState {
    return {
      documents: this.documents,
      cancelled: this.cancelled,
      cancelledC: this.cancelledC,
      pending: this.pending,
      amounts: { ...this.amounts },
      findings: { ...this.findings },
      withDiscrepancy: this.withDiscrepancy,
    };
  }

  out(basis: 'invoice' | 'payment'): TaxTotals {
    const a = this.amounts;
    return {
      documents: this.documents,
      cancelledDocuments: this.cancelled,
      cancelledTotal: fromCents(this.cancelledC),
      pendingCancellations: this.pending,
      subtotal: fromCents(a.subtotal),
      discount: fromCents(a.discount),
      taxableBase: fromCents(a.taxableBase),
      freightBase: fromCents(a.freightBase),
      exempt: {
        total: fromCents(a.exemptShortage + a.exemptIndemnity + a.exemptOther),
        shortage: fromCents(a.exemptShortage),
        indemnity: fromCents(a.exemptIndemnity),
        other: fromCents(a.exemptOther),
      },
      vat: { declared: fromCents(a.vatDeclared), expected: fromCents(a.vatExpected), difference: fromCents(a.vatDeclared - a.vatExpected) },
      retention: {
        declared: fromCents(a.retentionDeclared),
        expected: fromCents(a.retentionExpected),
        difference: fromCents(a.retentionDeclared - a.retentionExpected),
      },
      vatBases: {
        rate16: fromCents(a.vatBase16),
        rate8: fromCents(a.vatBase8),
        rate0: fromCents(a.vatBase0),
        exempt: fromCents(a.vatBaseExempt),
        otherRates: fromCents(a.vatBaseOther),
      },
      isrRetained: fromCents(a.isrRetained),
      ieps: { transferred: fromCents(a.iepsTransferred), retained: fromCents(a.iepsRetained) },
      transferredTaxes: fromCents(a.transferredTaxes),
      retainedTaxes: fromCents(a.retainedTaxes),
      total: fromCents(a.total),
      collected: basis === 'payment' ? fromCents(a.collected) : null,
      findings: { discrepancies: this.findings.discrepancy, warnings: this.findings.warning, infos: this.findings.info },
      documentsWithDiscrepancies: this.withDiscrepancy,
    };
  }
}

export interface ClientTaxTotals {
  client: string;
  clientName: string;
  clientKind: TaxpayerKind | 'unknown';
  totals: TaxTotals;
}

export interface MonthTaxTotals {
  month: string;
  totals: TaxTotals;
  clients: ClientTaxTotals[];
}

/** A client's name within a month: the one on its latest document (date, then id). */
interface ClientEntry {
  acc: Acc;
  name: string;
  kind: TaxpayerKind | 'unknown';
  nameAt: number;
  nameDocId: string;
}

/** The client-name rule: a document names its client when it is later than the one that did (date, then id). */
export const namesLater = (at: number, docId: string, current: { nameAt: number; nameDocId: string }): boolean =>
  at > current.nameAt || (at === current.nameAt && docId > current.nameDocId);

/** Overall, per month and per client within the month; months and clients sorted. */
export class TaxTotalsAccumulator {
  private readonly all = new Acc();
  private readonly months = new Map<string, { acc: Acc; clients: Map<string, ClientEntry> }>();

  constructor(private readonly basis: 'invoice' | 'payment') {}

  private client(month: string, client: string): { m: Acc; cl: ClientEntry | undefined; put: (e: ClientEntry) => void } {
    let m = this.months.get(month);
    if (!m) {
      m = { acc: new Acc(), clients: new Map() };
      this.months.set(month, m);
    }
    const clients = m.clients;
    return { m: m.acc, cl: clients.get(client), put: (e) => clients.set(client, e) };
  }

  add(c: TaxContribution): void {
    this.all.add(c, c.first);
    const { m, cl, put } = this.client(c.month, c.client);
    m.add(c, true);
    const entry = cl ?? { acc: new Acc(), name: c.clientName, kind: c.clientKind, nameAt: c.dateMs, nameDocId: c.docId };
    if (!cl) put(entry);
    else if (namesLater(c.dateMs, c.docId, entry)) Object.assign(entry, { name: c.clientName, kind: c.clientKind, nameAt: c.dateMs, nameDocId: c.docId });
    entry.acc.add(c, true);
  }

  /**
   * A client's totals of one day as kept on write (invoice basis: every document contributes
   * once, so the overall, month and client accumulators all count it).
   */
  addDayRow(
    month: string,
    row: { client: string; clientName: string; clientKind: TaxpayerKind | 'unknown'; nameAt: number; nameDocId: string; acc: TaxAccState },
  ): void {
    this.all.merge(row.acc);
    const { m, cl, put } = this.client(month, row.client);
    m.merge(row.acc);
    const entry = cl ?? { acc: new Acc(), name: row.clientName, kind: row.clientKind, nameAt: row.nameAt, nameDocId: row.nameDocId };
    if (!cl) put(entry);
    else if (namesLater(row.nameAt, row.nameDocId, entry))
      Object.assign(entry, { name: row.clientName, kind: row.clientKind, nameAt: row.nameAt, nameDocId: row.nameDocId });
    entry.acc.merge(row.acc);
  }

  /** Months with no document are listed too (zeros), so a period reads as a complete calendar. */
  result(allMonths: readonly string[]): { totals: TaxTotals; months: MonthTaxTotals[] } {
    const keys = [...new Set([...allMonths, ...this.months.keys()])].sort();
    return {
      totals: this.all.out(this.basis),
      months: keys.map((month) => {
        const m = this.months.get(month);
        const clients = m ? [...m.clients.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)) : [];
        return {
          month,
          totals: (m?.acc ?? new Acc()).out(this.basis),
          clients: clients.map(([client, v]) => ({ client, clientName: v.name, clientKind: v.kind, totals: v.acc.out(this.basis) })),
        };
      }),
    };
  }
}
