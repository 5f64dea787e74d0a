/**
 * Facts → received document: the invoice, the supplier's payment complements and credit notes,
 * and the cancellation requests and acknowledgements about them, in any order of arrival, give
 * the same document (docs/domain.md, "Received CFDIs"). Pure.
 */
import type { CancellationFact, CancellationMetadataFact, CancellationRequestFact } from '../finance/ledger/facts.ts';
import type { TaxLine } from '../model/financial-document.ts';
import type { ReceivedCategoryRule } from '../model/tenant-settings.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { groupedCents, retentionGroup, transferGroup } from '../tax/tax-lines.ts';
import { creditInInvoiceCurrency, creditNoteRate, mxnCents } from '../money/currency.ts';
import { businessDaysDeadline } from '../time/business-days.ts';
import { categoryOf, mainConceptIndex } from './received-category.ts';
import {
  receivedDocId,
  type ReceivedCancellation,
  type ReceivedCreditNoteFact,
  type ReceivedDocRow,
  type ReceivedInvoiceFact,
  type ReceivedPaymentFact,
  type ReceivedSettlement,
  type ReceivedTaxes,
  type ReceivedCancelFact,
} from './received-rows.ts';

type CancelFact = ReceivedCancelFact;

/**
 * The cancellation of one received CFDI from the supplier's request and the SAT's
 * acknowledgement: a request alone is pending; EstatusUUID 202 (already cancelled) is accepted;
 * 201 (request received) is pending while the tenant, as receiver, has to accept it (an invoice
 * over 1,000 MXN cancelled after the business day following its certification: RMF 2.7.1.35,
 * docs/domain.md "Cancellations"), accepted otherwise. A line of the SAT's bulk-download metadata
 * with Estatus 0 is the SAT's own record that the CFDI is cancelled: accepted since its
 * FechaCancelacion, whatever an acknowledgement said before. Payment complements and credit notes
 * need no acceptance here (`invoice` null).
 */
export function receivedCancellationOf(facts: readonly CancelFact[], invoice: ReceivedInvoiceFact | null): ReceivedCancellation | null {
  const request = facts.find((f): f is CancellationRequestFact => f.kind === 'cancellationRequest');
  const ack = facts.find((f): f is CancellationFact => f.kind === 'cancellation');
  const metadata = facts.find((f): f is CancellationMetadataFact => f.kind === 'cancellationMetadata');
  if (!request && !ack && !metadata) return null;
  const requestedAt = request?.date ?? ack?.date ?? metadata!.date;
  const motive = request?.motive ?? ack?.motive ?? null;
  const replacementUuid = request ? request.replacementUuid : (ack?.replacementUuid ?? null);
  if (metadata) return { status: 'accepted', motive, replacementUuid, requestedAt, date: metadata.date, statusSource: 'bulk-metadata', satStatus: null };
  if (!ack) return { status: 'pending', motive, replacementUuid, requestedAt, date: requestedAt, statusSource: 'request', satStatus: null };
  const needsAcceptance =
    invoice !== null && mxnCents(invoice.total, invoice.exchangeRate) > 100_000 && ack.date >= businessDaysDeadline(invoice.certifiedAt, 1);
  const status = ack.code === undefined || ack.code === '202' || !needsAcceptance ? 'accepted' : 'pending';
  return { status, motive, replacementUuid, requestedAt, date: ack.date, statusSource: 'acknowledgement', satStatus: ack.code ?? null };
}

const inEffect = (c: ReceivedCancellation | null): boolean => c !== null && (c.status === 'accepted' || c.status === 'expired');

/**
 * The document's taxes from its concepts: VAT transferred per rate, exempt base, VAT and ISR retained, IEPS. Each is the
 * rounded sum of its concepts' lines, as the CFDI's Comprobante/Impuestos states it (not a sum of rounded lines).
 */
export function receivedTaxes(concepts: readonly { transfers: readonly TaxLine[]; retentions: readonly TaxLine[] }[]): ReceivedTaxes {
  const transfers = concepts.flatMap((c) => c.transfers);
  const retentions = concepts.flatMap((c) => c.retentions);
  const vatAtRate = transfers.filter((t) => t.tax === 'IVA' && t.factor === 'Tasa' && t.rate !== null);
  const rates = [...new Set(vatAtRate.map((t) => t.rate!))].sort((a, b) => b - a);
  const at = (rate: number) => vatAtRate.filter((t) => t.rate === rate);
  const retained = (tax: string) =>
    fromCents(
      groupedCents(
        retentions.filter((t) => t.tax === tax),
        retentionGroup,
        'amount',
      ),
    );
  return {
    vatTransferred: rates.map((rate) => ({
      rate,
      base: fromCents(groupedCents(at(rate), transferGroup, 'base')),
      amount: fromCents(groupedCents(at(rate), transferGroup, 'amount')),
    })),
    vatExemptBase: fromCents(
      groupedCents(
        transfers.filter((t) => t.tax === 'IVA' && t.factor === 'Exento'),
        transferGroup,
        'base',
      ),
    ),
    vatRetained: retained('IVA'),
    isrRetained: retained('ISR'),
    iepsTransferred: fromCents(
      groupedCents(
        transfers.filter((t) => t.tax === 'IEPS'),
        transferGroup,
        'amount',
      ),
    ),
    iepsRetained: retained('IEPS'),
    transferred: fromCents(groupedCents(transfers, transferGroup, 'amount')),
    retained: fromCents(groupedCents(retentions, retentionGroup, 'amount')),
  };
}

/**
 * The stored document of one received invoice from every fact about it. Balance = Total − valid
 * payments − valid credit notes (never below 0), in the invoice's currency; a PUE invoice is paid
 * when issued (no complement ever comes for it). The category is that of the largest concept's
 * code under the tenant's rules (received-category.ts). Deterministic.
 */
export function buildReceivedDocument(
  tenant: string,
  invoice: ReceivedInvoiceFact,
  payments: readonly ReceivedPaymentFact[],
  creditNotes: readonly ReceivedCreditNoteFact[],
  cancellationsByUuid: ReadonlyMap<string, readonly CancelFact[]>,
  rules: readonly ReceivedCategoryRule[],
): ReceivedDocRow {
  const own = receivedCancellationOf(cancellationsByUuid.get(invoice.uuid) ?? [], invoice);
  const cancelled = inEffect(own);
  const drafts: Omit<ReceivedSettlement, 'cancelled'>[] = [];
  if (invoice.paymentMethod === 'PUE' && !cancelled) {
    drafts.push({
      kind: 'pue',
      uuid: invoice.uuid,
      seq: 0,
      date: invoice.date,
      amount: invoice.total,
      balanceBefore: invoice.total,
      balanceAfter: 0,
      form: invoice.paymentForm ?? null,
    });
  }
  for (const p of payments) {
    for (const r of p.records) {
      if (r.invoiceUuid !== invoice.uuid) continue;
      drafts.push({
        kind: 'payment',
        uuid: p.uuid,
        seq: r.seq,
        date: r.date,
        amount: r.amount,
        balanceBefore: r.balanceBefore,
        balanceAfter: r.balanceAfter,
        ...(r.exchangeRate === undefined ? {} : { exchangeRate: r.exchangeRate }),
        form: r.form ?? null,
        ...(p.pagosVersion === undefined ? {} : { pagosVersion: p.pagosVersion }),
      });
    }
  }
  let runningC = toCents(invoice.total);
  const notes = creditNotes.filter((n) => n.invoiceUuid === invoice.uuid).sort((a, b) => a.date - b.date || a.uuid.localeCompare(b.uuid));
  for (const n of notes)
    drafts.push({
      kind: 'creditNote',
      uuid: n.uuid,
      seq: 1,
      date: n.date,
      amount: creditInInvoiceCurrency(n, invoice),
      balanceBefore: 0,
      balanceAfter: 0,
      // Its own TipoCambio: what it gives back of the VAT is worth that in MXN (the tax position's art. 7 lines).
      ...creditNoteRate(n, invoice),
      // Its own taxes, converted as its Total is.
      ...(n.taxes === undefined
        ? {}
        : {
            taxes: {
              vat: creditInInvoiceCurrency({ ...n, amount: n.taxes.vat }, invoice),
              vatRetained: creditInInvoiceCurrency({ ...n, amount: n.taxes.vatRetained }, invoice),
              isrRetained: creditInInvoiceCurrency({ ...n, amount: n.taxes.isrRetained }, invoice),
            },
          }),
    });
  drafts.sort((a, b) => a.date - b.date || a.uuid.localeCompare(b.uuid) || a.seq - b.seq);
  let settledC = 0;
  const settlements: ReceivedSettlement[] = drafts.map((d) => {
    const c = d.kind === 'pue' ? null : receivedCancellationOf(cancellationsByUuid.get(d.uuid) ?? [], null);
    const gone = inEffect(c);
    if (!gone) settledC += toCents(d.amount);
    if (d.kind !== 'creditNote') {
      if (!gone) runningC = toCents(d.balanceAfter);
      return { ...d, cancelled: gone };
    }
    // A credit note states no balances: it continues the chain of valid records.
    const before = runningC;
    const after = Math.max(0, before - toCents(d.amount));
    if (!gone) runningC = after;
    return { ...d, balanceBefore: fromCents(before), balanceAfter: fromCents(after), cancelled: gone };
  });
  const balanceC = cancelled ? 0 : Math.max(0, toCents(invoice.total) - settledC);
  const paymentState = cancelled ? 'cancelled' : balanceC === 0 ? 'paid' : settledC > 0 ? 'partial' : 'unpaid';
  const mainCode = invoice.concepts[mainConceptIndex(invoice.concepts)]!.code;
  return {
    _id: receivedDocId(tenant, invoice.uuid),
    tenant,
    uuid: invoice.uuid,
    serie: invoice.serie,
    folio: invoice.folio,
    date: invoice.date,
    certifiedAt: invoice.certifiedAt,
    supplier: { ...invoice.supplier },
    currency: invoice.currency,
    exchangeRate: invoice.exchangeRate,
    paymentMethod: invoice.paymentMethod,
    paymentForm: invoice.paymentForm ?? null,
    use: invoice.use ?? null,
    ...(invoice.cfdiVersion ? { cfdiVersion: invoice.cfdiVersion } : {}),
    ...(invoice.cartaPorteVersion ? { cartaPorteVersion: invoice.cartaPorteVersion } : {}),
    ...(invoice.xml ? { xml: invoice.xml } : {}),
    mainCode,
    category: categoryOf(mainCode, rules),
    subTotal: invoice.subTotal,
    discount: invoice.discount,
    total: invoice.total,
    taxes: receivedTaxes(invoice.concepts),
    concepts: invoice.concepts.map((c) => ({ ...c, transfers: c.transfers.map((t) => ({ ...t })), retentions: c.retentions.map((t) => ({ ...t })) })),
    settlements,
    paid: fromCents(settledC),
    balance: fromCents(balanceC),
    paymentState,
    cancellation: own,
    cancellationStatus: own?.status ?? 'none',
    // Stamped with the write time when stored (received-repo.ts putReceivedDocs).
    lastUpdate: '',
  };
}
