/**
 * The month's tax position on the cash basis (docs/domain.md, "The month's tax position"): what
 * the carrier collected from its clients and paid to its suppliers in one month, and the VAT and
 * retentions that follow. Pure: rows in, integer-cent figures out, every figure with the lines
 * (documents and payments) it comes from.
 */
import type { FinancialDocument, PaymentRecord } from '../model/financial-document.ts';
import { invoiceCancellation, isPaymentCancelled } from '../finance/cancellation.ts';
import { centsToMxnCents, rateOf } from '../money/currency.ts';
import { toCents } from '../money/cents.ts';
import type { ReceivedDocRow, ReceivedSettlement } from '../received/received-rows.ts';
import { cashBasisForPeriod } from './cash-basis.ts';
import { documentTaxTotalsC } from './tax-lines.ts';

export interface MonthRange {
  month: string;
  start: number;
  endExclusive: number;
}

/** round(x × num ÷ den) half away from zero, exactly (BigInt: cents × cents overflows 2^53). */
export function proportionC(x: number, num: number, den: number): number {
  if (den <= 0 || x === 0 || num === 0) return 0;
  const sign = Math.sign(x) * Math.sign(num);
  const p = BigInt(Math.abs(x)) * BigInt(Math.abs(num));
  const d = BigInt(den);
  const r = Number((p * 2n + d) / (2n * d));
  return r === 0 ? 0 : sign * r;
}

/**
 * The part of x that `countedC` paid after `beforeC` was paid (of a Total of `totalC`): the difference of the running
 * totals' proportions, x × (before + counted) ÷ Total − x × before ÷ Total, each rounded (proportionC). The parts of
 * every payment of a fully paid document add up to x exactly, however the payments split it (three thirds of 1,600.00
 * VAT: 533.33 + 533.34 + 533.33, where each third rounded by itself gave 533.33 three times); a first payment's is
 * proportionC(x, counted, Total).
 */
export function partOfRunningC(x: number, beforeC: number, countedC: number, totalC: number): number {
  return proportionC(x, beforeC + countedC, totalC) - proportionC(x, beforeC, totalC);
}

/**
 * One issued invoice's collections in the month (all its valid complements in the month together), or what one
 * of its credit notes in the month gives back of what was collected (negative amounts, LIVA art. 7).
 */
export interface CollectionLine {
  kind: 'collection' | 'creditNote';
  /** A credit note's UUID; null for a collection. */
  noteUuid: string | null;
  docId: string;
  uuid: string;
  party: string;
  partyName: string;
  paymentMethod: 'PUE' | 'PPD';
  /** The last collection in the month (PUE: the invoice date); a credit note's date. */
  date: number;
  payments: number;
  /** MXN cents collected that count (capped at the Total). */
  paidC: number;
  share: number;
  vatC: number;
  vatRetainedC: number;
  isrRetainedC: number;
}

/** The issued side of a month: each invoice with something collected in it. Cancelled invoices carry no tax. */
export function collectionLine(doc: FinancialDocument, range: MonthRange): CollectionLine | null {
  const share = cashBasisForPeriod(doc, range);
  if (share.reason !== undefined || share.counted === 0) return null;
  const rate = share.exchangeRate;
  const totalC = toCents(doc.iTot);
  const countedC = toCents(share.counted);
  // The month's part of the running total (as the VAT and retention cashBasisForPeriod takes).
  const beforeC = toCents(share.countedBefore);
  const isrC = partOfRunningC(documentTaxTotalsC(doc).isrRetained, beforeC, countedC, totalC);
  // Its last collection: a cancelled complement collected nothing.
  const inMonth = doc.payments
    .filter((p) => p.kind === 'payment' && p.date >= range.start && p.date < range.endExclusive && !isPaymentCancelled(doc, p))
    .map((p) => p.date);
  return {
    kind: 'collection',
    noteUuid: null,
    docId: doc.id,
    uuid: doc.invoice.uuid,
    party: doc.client,
    partyName: doc.clientName,
    paymentMethod: doc.invoice.paymentMethod,
    date: doc.invoice.paymentMethod === 'PUE' ? doc.date : Math.max(...inMonth),
    payments: share.paymentsCount,
    paidC: centsToMxnCents(countedC, rate),
    share: share.share,
    vatC: centsToMxnCents(toCents(share.vat), rate),
    vatRetainedC: centsToMxnCents(toCents(share.retention), rate),
    isrRetainedC: centsToMxnCents(isrC, rate),
  };
}

/** A collection or a credit note of an issued invoice, in the order they settle it, with what it counts. */
interface IssuedSettlement {
  kind: 'payment' | 'creditNote';
  uuid: string;
  date: number;
  rate: number | undefined;
  /** A collection: what it collects of what its notes and collections before it left open (invoice currency, cents). */
  withinOpenC: number;
  /** A credit note: what it gives back of what was collected (the rest closed what was open). */
  refundC: number;
  /** A credit note: its Total (invoice currency, cents) and the taxes it states itself, when kept. */
  amountC: number;
  taxes: PaymentRecord['taxes'];
}

/**
 * An issued invoice's collections and credit notes in order (date, then UUID; a PUE invoice is collected at its date,
 * by itself): a note first closes what is still open (VAT never collected, so never owed) and only the rest gives back
 * what was collected; a collection counts up to what is still open (beyond the Total less the notes it carries none).
 * A cancelled invoice or record settles nothing.
 */
function issuedSettlements(doc: FinancialDocument): IssuedSettlement[] {
  const totalC = toCents(doc.iTot);
  if (totalC <= 0 || invoiceCancellation(doc) !== null) return [];
  const pue = doc.invoice.paymentMethod === 'PUE';
  const events = doc.payments
    .filter((p) => !isPaymentCancelled(doc, p) && (p.kind === 'creditNote' || !pue))
    .map((p) => ({ kind: p.kind, uuid: p.uuid, date: p.date, amountC: Math.max(0, toCents(p.amount)), rate: p.exchangeRate, taxes: p.taxes }));
  if (pue) events.push({ kind: 'payment', uuid: '', date: doc.date, amountC: totalC, rate: undefined, taxes: undefined });
  events.sort((a, b) => a.date - b.date || a.uuid.localeCompare(b.uuid));
  let openC = totalC;
  let collectedC = 0;
  return events.map((e) => {
    if (e.kind === 'payment') {
      const withinOpenC = Math.min(e.amountC, openC);
      openC -= withinOpenC;
      collectedC += withinOpenC;
      return { kind: e.kind, uuid: e.uuid, date: e.date, rate: e.rate, withinOpenC, refundC: 0, amountC: e.amountC, taxes: undefined };
    }
    const closes = Math.min(e.amountC, openC);
    openC -= closes;
    const refundC = Math.min(e.amountC - closes, collectedC);
    collectedC -= refundC;
    return { kind: e.kind, uuid: e.uuid, date: e.date, rate: e.rate, withinOpenC: 0, refundC, amountC: e.amountC, taxes: e.taxes };
  });
}

/**
 * What the carrier's credit notes on an issued invoice dated in the month give back of what was collected (LIVA
 * art. 7, first paragraph: the discount and the tax corresponding to it are deducted from the acts of the month): the
 * taxes the note states itself, in proportion to the part of its Total that gives back (the rest closed what was
 * open); a note imported before its taxes were kept, the invoice's taxes in proportion ÷ its Total.
 */
function creditNoteLines(doc: FinancialDocument, settlements: readonly IssuedSettlement[], range: MonthRange): CollectionLine[] {
  const totalC = toCents(doc.iTot);
  const taxes = documentTaxTotalsC(doc);
  const out: CollectionLine[] = [];
  // What the notes before it without taxes of their own gave back: those share the invoice's taxes, each taking its
  // part of the running total (partOfRunningC), so notes giving back all that was collected give back all its taxes.
  let refundedBeforeC = 0;
  for (const e of settlements) {
    if (e.kind !== 'creditNote' || e.refundC === 0) continue;
    const own = e.taxes;
    const beforeC = refundedBeforeC;
    if (!own) refundedBeforeC += e.refundC;
    if (e.date < range.start || e.date >= range.endExclusive) continue;
    const rate = e.rate ?? rateOf(doc);
    const back = (c: number): number => -centsToMxnCents(own ? proportionC(c, e.refundC, e.amountC) : partOfRunningC(c, beforeC, e.refundC, totalC), rate);
    out.push({
      kind: 'creditNote',
      noteUuid: e.uuid,
      docId: doc.id,
      uuid: doc.invoice.uuid,
      party: doc.client,
      partyName: doc.clientName,
      paymentMethod: doc.invoice.paymentMethod,
      date: e.date,
      payments: 0,
      paidC: centsToMxnCents(e.refundC, rate),
      share: Math.round((e.refundC / totalC) * 1e6) / 1e6,
      vatC: back(own ? toCents(own.vat) : toCents(doc.iTax1)),
      vatRetainedC: back(own ? toCents(own.vatRetained) : toCents(doc.iTax2)),
      isrRetainedC: back(own ? toCents(own.isrRetained) : taxes.isrRetained),
    });
  }
  return out;
}

/**
 * An issued invoice's lines of the month: its collections (collectionLine; what a collection pays beyond what its
 * credit notes left open carries no tax, so the line is scaled to that part) and what its credit notes give back.
 */
export function issuedLines(doc: FinancialDocument, range: MonthRange): CollectionLine[] {
  const line = collectionLine(doc, range);
  const settlements = doc.payments.some((p) => p.kind === 'creditNote') ? issuedSettlements(doc) : [];
  const notes = creditNoteLines(doc, settlements, range);
  // Without credit notes (most invoices) nothing narrows the collection: no second read of its cash basis.
  if (!line || !settlements.length) return line ? [line, ...notes] : notes;
  const share = cashBasisForPeriod(doc, range);
  const countedC = toCents(share.counted);
  const payments = settlements.filter((e) => e.kind === 'payment' && e.date < range.endExclusive);
  const inMonth = payments.filter((e) => e.date >= range.start);
  const withinOpenC = inMonth.reduce((sum, e) => sum + e.withinOpenC, 0);
  if (withinOpenC >= countedC) return [line, ...notes];
  // Converted at the rate of what counts (each collection's own, weighted by what it collects of what was open): a
  // payment beyond what the notes left open carries no tax, and weighs nothing in the conversion either.
  const own = rateOf(doc);
  const weighted = inMonth.reduce((sum, e) => sum + e.withinOpenC * (e.rate ?? own), 0);
  const rate = withinOpenC > 0 ? Math.round((weighted / withinOpenC) * 1e6) / 1e6 : share.exchangeRate;
  // Its taxes are the part of the running total of what the collections counted (as an unnarrowed line's): the
  // collections of an invoice add up to its taxes × what they counted ÷ Total exactly, however they split it.
  const withinBeforeC = payments.filter((e) => e.date < range.start).reduce((sum, e) => sum + e.withinOpenC, 0);
  const totalC = toCents(doc.iTot);
  const taxPart = (c: number): number => centsToMxnCents(partOfRunningC(c, withinBeforeC, withinOpenC, totalC), rate);
  const scaled: CollectionLine = {
    ...line,
    paidC: centsToMxnCents(withinOpenC, rate),
    share: Math.round((withinOpenC / totalC) * 1e6) / 1e6,
    vatC: taxPart(toCents(doc.iTax1)),
    vatRetainedC: taxPart(toCents(doc.iTax2)),
    isrRetainedC: taxPart(documentTaxTotalsC(doc).isrRetained),
  };
  return scaled.paidC === 0 && scaled.vatC === 0 ? notes : [scaled, ...notes];
}

/** Why VAT shown on a received CFDI and paid in the month is not creditable (LIVA art. 5; docs/domain.md). */
export type NonCreditableCode = 'DOCUMENT_CANCELLED' | 'USE_S01' | 'FUEL_PAID_IN_CASH' | 'CASH_OVER_LIMIT' | 'NO_VAT_SHOWN';

export const NON_CREDITABLE_MESSAGES: Readonly<Record<NonCreditableCode, string>> = {
  DOCUMENT_CANCELLED: 'The CFDI is cancelled: it supports no deduction and no credit.',
  USE_S01: 'UsoCFDI S01 (sin efectos fiscales): not deductible, so its VAT is not creditable (LIVA art. 5 fr. I).',
  FUEL_PAID_IN_CASH: 'Fuel paid in cash (FormaPago 01) is not deductible (LISR art. 27 fr. III): its VAT is not creditable (LIVA art. 5 fr. I).',
  CASH_OVER_LIMIT:
    'A payment over $2,000 in cash (FormaPago 01) is not deductible (LISR art. 27 fr. III: by transfer, cheque or card): its VAT is not creditable (LIVA art. 5 fr. I).',
  NO_VAT_SHOWN: 'The CFDI shows no IVA transfer: nothing can be credited (LIVA art. 5 fr. II).',
};

/** LISR art. 27 fr. III: a payment over $2,000 (MXN cents) must be made by electronic transfer, cheque or card to be deductible. */
export const CASH_PAYMENT_LIMIT_C = 200_000;

/** A supplier's CFDI settled in the month: its own PUE, a supplier's payment complement, or a credit note. */
export interface PaymentLine {
  docId: string;
  uuid: string;
  party: string;
  partyName: string;
  category: string;
  mainCode: string;
  paymentMethod: 'PUE' | 'PPD';
  kind: ReceivedSettlement['kind'];
  /** The complement's or credit note's UUID; null for a PUE invoice (paid by itself). */
  paymentUuid: string | null;
  date: number;
  form: string | null;
  paidC: number;
  share: number;
  /** Value of the acts paid (the part of each IVA base paid), MXN cents. */
  basesC: { rate16: number; rate8: number; rate0: number; exempt: number };
  vatC: number;
  vatRetainedC: number;
  isrRetainedC: number;
  /** Credit notes: the value before VAT they return or discount. */
  returnsC: number;
  /** Credit notes: the part of the note that gives back what was paid with VAT credited (MXN cents); 0 for a payment. */
  refundC: number;
  /** Credit notes: that part ÷ Total. */
  refundShare: number;
  /** Credit notes: the VAT given back of what was paid and credited (LIVA art. 7), MXN cents; 0 for a payment. */
  restitutedVatC: number;
  /**
   * Whether the CFDI retains ISR at a fee's rate, 5 % of its SubTotal − Descuento or more (10 %, LISR art. 106): what its
   * DIOT type of operation reads, whatever this line carries. The RESICO retention (1.25 %, LISR art. 113-J) applies to
   * goods and any service alike, so it says nothing of fees.
   */
  retainsIsr: boolean;
  /** Credit notes: null (what a note gives back of a non-creditable payment restitutes nothing). */
  nonCreditable: NonCreditableCode | null;
}

const FUEL_CODES = ['15101505', '15101514', '15101515'];
/** What a month's lines read of a received CFDI (the tax position's read projects just this). */
export type SettledReceivedDoc = Pick<
  ReceivedDocRow,
  | '_id'
  | 'uuid'
  | 'supplier'
  | 'category'
  | 'mainCode'
  | 'paymentMethod'
  | 'paymentForm'
  | 'exchangeRate'
  | 'use'
  | 'subTotal'
  | 'discount'
  | 'total'
  | 'taxes'
  | 'settlements'
  | 'cancellationStatus'
> & { concepts: Pick<ReceivedDocRow['concepts'][number], 'code'>[] };

const isFuel = (doc: SettledReceivedDoc): boolean => doc.category === 'fuel' || doc.concepts.some((c) => FUEL_CODES.includes(c.code));
const cancelledDoc = (doc: SettledReceivedDoc): boolean => doc.cancellationStatus === 'accepted' || doc.cancellationStatus === 'expired';

/** The first reason, in this order, that the VAT of a payment is not creditable; null when it is. */
export function nonCreditableReason(doc: SettledReceivedDoc, form: string | null, paidMxnC: number): NonCreditableCode | null {
  if (cancelledDoc(doc)) return 'DOCUMENT_CANCELLED';
  if (doc.use === 'S01') return 'USE_S01';
  if (isFuel(doc) && form === '01') return 'FUEL_PAID_IN_CASH';
  if (form === '01' && paidMxnC > CASH_PAYMENT_LIMIT_C) return 'CASH_OVER_LIMIT';
  if (doc.taxes.vatTransferred.length === 0 && doc.taxes.vatExemptBase === 0) return 'NO_VAT_SHOWN';
  return null;
}

/**
 * The received side of a month: one line per valid settlement dated in it. A payment carries the
 * invoice's taxes in proportion paid ÷ Total (art. 1-B; the carrier's retentions are made when it
 * pays, art. 1-A), and what is paid beyond the Total (with the credit notes before it) carries none;
 * a credit note carries the value before VAT it returns, in proportion note ÷ Total, and the VAT it
 * gives back of what was already paid (`restitutedVatC`, LIVA art. 7: it reduces the creditable VAT
 * of its month). Settlements are taken in order (date, UUID): a note first closes what is still
 * open, and only the rest returns what was paid (the part that closes an open balance is VAT never
 * paid, so never credited). What it gives back is the tax corresponding to the discount, as on the
 * issued side: the VAT the note states itself less the VAT retained it states, in proportion to the
 * part of its Total that gives back credited VAT; a note whose fact was recorded before its taxes
 * were kept, the invoice's VAT less its retained VAT in proportion ÷ the invoice's Total.
 */
export function paymentLines(doc: SettledReceivedDoc, range: { start: number; endExclusive: number }): PaymentLine[] {
  const totalC = toCents(doc.total);
  if (totalC <= 0) return [];
  const out: PaymentLine[] = [];
  let openC = totalC;
  // Paid and not given back; of it, what was paid by payments whose VAT was credited.
  let paidNetC = 0;
  let creditablePaidC = 0;
  // Running totals, in the same order: what earlier payments counted, what earlier notes returned, and what earlier
  // notes without taxes of their own gave back of what was credited. A settlement's part of a figure is the difference
  // of the running total's proportions (partOfRunningC), so the parts of a fully paid invoice add up to its taxes and
  // bases exactly, however its payments split it.
  let paidBeforeC = 0;
  let returnedBeforeC = 0;
  let restitutedBeforeC = 0;
  for (const s of doc.settlements) {
    if (s.cancelled) continue;
    const isNote = s.kind === 'creditNote';
    const amountC = Math.min(Math.max(0, toCents(s.amount)), totalC);
    const rate = s.exchangeRate ?? doc.exchangeRate;
    // A credit note's own taxes (its Total, uncapped, is what they correspond to); else the invoice's ÷ its Total.
    const own = isNote ? s.taxes : undefined;
    const before = { paidC: paidBeforeC, returnedC: returnedBeforeC, restitutedC: restitutedBeforeC };
    const form = s.form ?? (s.kind === 'pue' ? doc.paymentForm : null);
    let countedC = amountC;
    let refundC = 0;
    // The part of the refund that gives back VAT that was credited: a note returns what was paid in proportion to how
    // it was paid (10,600 in cash and 1,000 by transfer: a note of 5,800 gives back 500 of the credited 1,000).
    let creditableRefundC = 0;
    // A note on a cancelled CFDI gives nothing back of it: its line is the document's (the DIOT reports neither).
    const reason = isNote ? (cancelledDoc(doc) ? 'DOCUMENT_CANCELLED' : null) : nonCreditableReason(doc, form, centsToMxnCents(Math.min(amountC, openC), rate));
    if (isNote) {
      const closes = Math.min(amountC, openC);
      openC -= closes;
      refundC = Math.min(amountC - closes, paidNetC);
      creditableRefundC = proportionC(refundC, creditablePaidC, paidNetC);
      paidNetC -= refundC;
      creditablePaidC -= creditableRefundC;
      returnedBeforeC += amountC;
      if (!own) restitutedBeforeC += creditableRefundC;
    } else {
      countedC = Math.min(amountC, openC);
      openC -= countedC;
      paidNetC += countedC;
      paidBeforeC += countedC;
      if (reason === null) creditablePaidC += countedC;
    }
    if (s.date < range.start || s.date >= range.endExclusive) continue;
    const byRate = (r: number): { base: number; amount: number } => {
      let base = 0;
      let amount = 0;
      for (const v of doc.taxes.vatTransferred)
        if (Math.abs(v.rate - r) < 1e-6) {
          base += toCents(v.base);
          amount += toCents(v.amount);
        }
      return { base, amount };
    };
    const r16 = byRate(0.16);
    const r8 = byRate(0.08);
    const r0 = byRate(0);
    const vatAllC = doc.taxes.vatTransferred.reduce((sum, v) => sum + toCents(v.amount), 0);
    const retainedC = toCents(doc.taxes.vatRetained);
    const paid = (c: number): number => centsToMxnCents(partOfRunningC(c, before.paidC, countedC, totalC), rate);
    const noteC = Math.max(0, toCents(s.amount));
    // A note's own taxes are its alone (÷ its own Total); the invoice's are shared by its notes, so taken from the running total.
    const restituted = (c: number): number =>
      centsToMxnCents(own ? proportionC(c, creditableRefundC, noteC) : partOfRunningC(c, before.restitutedC, creditableRefundC, totalC), rate);
    out.push({
      docId: doc._id,
      uuid: doc.uuid,
      party: doc.supplier.rfc,
      partyName: doc.supplier.name,
      category: doc.category,
      mainCode: doc.mainCode,
      paymentMethod: doc.paymentMethod,
      kind: s.kind,
      paymentUuid: s.kind === 'pue' ? null : s.uuid,
      date: s.date,
      form,
      paidC: centsToMxnCents(countedC, rate),
      share: Math.round((countedC / totalC) * 1e6) / 1e6,
      basesC: isNote
        ? { rate16: 0, rate8: 0, rate0: 0, exempt: 0 }
        : { rate16: paid(r16.base), rate8: paid(r8.base), rate0: paid(r0.base), exempt: paid(toCents(doc.taxes.vatExemptBase)) },
      vatC: isNote ? 0 : paid(vatAllC),
      vatRetainedC: isNote ? 0 : paid(retainedC),
      isrRetainedC: isNote ? 0 : paid(toCents(doc.taxes.isrRetained)),
      // A note's own value before its taxes (its Total less the VAT it states, plus what it states retained); without its own
      // taxes (stored before they were kept), the invoice's SubTotal − Descuento in proportion.
      returnsC: isNote
        ? centsToMxnCents(
            own
              ? Math.max(0, noteC - toCents(own.vat) + toCents(own.vatRetained) + toCents(own.isrRetained))
              : partOfRunningC(toCents(doc.subTotal) - toCents(doc.discount), before.returnedC, amountC, totalC),
            rate,
          )
        : 0,
      // What was paid to the supplier of the part given back (the VAT less what the carrier retained, as credited).
      // Its line shows the part that gave back credited VAT.
      refundC: centsToMxnCents(creditableRefundC, rate),
      refundShare: Math.round((creditableRefundC / totalC) * 1e6) / 1e6,
      restitutedVatC: own ? restituted(toCents(own.vat)) - restituted(toCents(own.vatRetained)) : restituted(vatAllC) - restituted(retainedC),
      retainsIsr: toCents(doc.taxes.isrRetained) * 20 >= Math.max(1, toCents(doc.subTotal) - toCents(doc.discount)),
      nonCreditable: reason,
    });
  }
  return out;
}

export const POSITION_FIGURES = [
  'vatCollected',
  'vatRetainedByClients',
  'creditableVat',
  'nonCreditableVat',
  'retentionCredit',
  'vatRetainedByCarrier',
  'isrRetainedByCarrier',
  'isrRetainedByClients',
] as const;
export type PositionFigure = (typeof POSITION_FIGURES)[number];

/** One document or payment behind a figure, as the answer shows it. */
export interface FigureLine {
  side: 'issued' | 'received';
  docId: string;
  uuid: string;
  party: string;
  partyName: string;
  paymentMethod: 'PUE' | 'PPD';
  /** pue: the invoice paid in one exhibition; payment: payment complement(s) (issued: all of the month's together); creditNote: a credit note giving back taxes of what was paid. */
  settlement: 'pue' | 'payment' | 'creditNote';
  paymentUuid: string | null;
  payments: number;
  date: number;
  paidC: number;
  share: number;
  amountC: number;
  reason: NonCreditableCode | null;
}

const fromCollection = (l: CollectionLine, amountC: number): FigureLine => ({
  side: 'issued',
  docId: l.docId,
  uuid: l.uuid,
  party: l.party,
  partyName: l.partyName,
  paymentMethod: l.paymentMethod,
  settlement: l.kind === 'creditNote' ? 'creditNote' : l.paymentMethod === 'PUE' ? 'pue' : 'payment',
  paymentUuid: l.noteUuid,
  payments: l.payments,
  date: l.date,
  paidC: l.paidC,
  share: l.share,
  amountC,
  reason: null,
});

/**
 * The IVA the carrier retained on a month's payments that the next month credits (art. 5 fr. IV): the retentions of
 * expenses whose VAT is creditable (what `vatRetainedByCarrier` owes the SAT includes the others).
 */
export const creditableRetentionLines = (payments: readonly PaymentLine[]): FigureLine[] =>
  payments
    .filter((p) => p.kind !== 'creditNote' && p.nonCreditable === null && p.vatRetainedC !== 0)
    .map((p) => fromPayment(p, p.vatRetainedC))
    .sort(byDate);

const fromPayment = (l: PaymentLine, amountC: number): FigureLine => ({
  side: 'received',
  docId: l.docId,
  uuid: l.uuid,
  party: l.party,
  partyName: l.partyName,
  paymentMethod: l.paymentMethod,
  settlement: l.kind,
  paymentUuid: l.paymentUuid,
  // Complements counted: a credit note is none (as on the issued side).
  payments: l.kind === 'creditNote' ? 0 : 1,
  date: l.date,
  // A credit note's line shows what it gives back of what was paid.
  paidC: l.kind === 'creditNote' ? l.refundC : l.paidC,
  share: l.kind === 'creditNote' ? l.refundShare : l.share,
  amountC,
  reason: l.nonCreditable,
});

const byDate = (a: FigureLine, b: FigureLine): number =>
  a.date - b.date || a.uuid.localeCompare(b.uuid) || (a.paymentUuid ?? '').localeCompare(b.paymentUuid ?? '');

export interface PositionFigures {
  lines: Record<PositionFigure, FigureLine[]>;
  totalsC: Record<PositionFigure, number>;
  /** collected − retained by clients − creditable − retention credit: positive payable, negative in the carrier's favour. */
  vatPayableC: number;
}

/**
 * The figures of a month from its collections, its payments, and the previous month's payments
 * (whose IVA retained becomes creditable now: art. 5 fr. IV, once paid to the SAT by the 17th).
 */
export function positionFigures(collections: readonly CollectionLine[], payments: readonly PaymentLine[], previous: readonly PaymentLine[]): PositionFigures {
  const paid = payments.filter((p) => p.kind !== 'creditNote');
  const valid = paid.filter((p) => p.nonCreditable !== 'DOCUMENT_CANCELLED');
  // LIVA art. 5 asks of the retained VAT all it asks of the rest: none of a non-deductible expense is credited.
  const prevCreditable = previous.filter((p) => p.kind !== 'creditNote' && p.nonCreditable === null);
  const lines: Record<PositionFigure, FigureLine[]> = {
    vatCollected: collections.filter((c) => c.vatC !== 0).map((c) => fromCollection(c, c.vatC)),
    vatRetainedByClients: collections.filter((c) => c.vatRetainedC !== 0).map((c) => fromCollection(c, c.vatRetainedC)),
    isrRetainedByClients: collections.filter((c) => c.isrRetainedC !== 0).map((c) => fromCollection(c, c.isrRetainedC)),
    // The VAT paid to the supplier (art. 5 fr. III): the part the carrier retained is credited once paid to the SAT,
    // as next month's retention credit (fr. IV), never twice.
    creditableVat: [
      ...paid.filter((p) => p.nonCreditable === null && p.vatC - p.vatRetainedC !== 0).map((p) => fromPayment(p, p.vatC - p.vatRetainedC)),
      // A credit note's VAT given back of what was paid reduces the creditable VAT of its month (LIVA art. 7).
      ...payments.filter((p) => p.restitutedVatC !== 0).map((p) => fromPayment(p, -p.restitutedVatC)),
    ],
    nonCreditableVat: paid.filter((p) => p.nonCreditable !== null).map((p) => fromPayment(p, p.vatC)),
    vatRetainedByCarrier: valid.filter((p) => p.vatRetainedC !== 0).map((p) => fromPayment(p, p.vatRetainedC)),
    isrRetainedByCarrier: valid.filter((p) => p.isrRetainedC !== 0).map((p) => fromPayment(p, p.isrRetainedC)),
    retentionCredit: creditableRetentionLines(prevCreditable),
  };
  const totalsC = {} as Record<PositionFigure, number>;
  for (const f of POSITION_FIGURES) {
    lines[f].sort(byDate);
    totalsC[f] = lines[f].reduce((s, l) => s + l.amountC, 0);
  }
  const vatPayableC = totalsC.vatCollected - totalsC.vatRetainedByClients - totalsC.creditableVat - totalsC.retentionCredit;
  return { lines, totalsC, vatPayableC };
}
