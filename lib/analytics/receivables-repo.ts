/**
 * Receivables queries of the cash inflow forecast: open invoices as of an
 * instant, the payment history that yields client payment delays, and
 * revenue per client for customer concentration. Tenant (and period) `$match`
 * first, projected at once; each query returns only the rows the report needs.
 * Open invoices and payment history are returned as rows that the forecast
 * folds one by one: the payment history (one row per paid invoice of the
 * period: ~86,000 at 100,000 invoices) and the open invoices as cursors of
 * AUDIT_BATCH_SIZE rows per round trip.
 */
import type { Db, Document } from 'mongodb';
import { financialDocs } from '../db/collections.ts';
import type { FinancialDocument } from '../model/financial-document.ts';
import {
  AUDIT_BATCH_SIZE,
  cancellationInEffectExpr,
  centsExpr,
  elementInRange,
  invoiceCancelledExpr,
  paymentCancellationUuidsExpr,
  paymentFlagHeldAtExpr,
  sumOver,
} from '../db/pipeline.ts';
import { centsToMxnCents } from '../money/currency.ts';

/** The fields lib/finance/balance.ts reads, plus what the forecast shows. */
export type OpenInvoiceRow = Pick<
  FinancialDocument,
  '_id' | 'id' | 'client' | 'clientName' | 'date' | 'iTot' | 'payments' | 'canceled' | 'currency' | 'exchangeRate'
> & {
  invoice: Pick<FinancialDocument['invoice'], 'uuid' | 'paymentMethod'>;
};

/**
 * Invoices emitted up to `asOf`, not cancelled by then, with an outstanding
 * balance as of then (Total − valid payments and credit notes dated up to
 * asOf, in integer cents). Open invoices can be of any age, so this looks at
 * the tenant's documents up to asOf, but the database does the filtering and
 * only open ones travel. Payments and cancellations after asOf are dropped in
 * the projection and a payment cancelled after asOf counts (its flag as it stood
 * then), so a past asOf reproduces the receivables of that day.
 */
export function streamOpenInvoices(db: Db, tenant: string, q: { asOf: number; client?: string }, maxTimeMS: number): AsyncIterable<OpenInvoiceRow> {
  const pipeline: Document[] = [
    { $match: { company: tenant, date: { $lte: q.asOf }, ...(q.client ? { client: q.client } : {}) } },
    // Cheap necessary condition first (most invoices are settled): an invoice can be open as of asOf only
    // if its records sum below the Total, or something needs a closer look (a cancellation, a cancelled
    // payment, a record dated after asOf). The exact test follows on the survivors.
    {
      $match: {
        $expr: {
          $or: [
            { $lt: [{ $sum: '$payments.amount' }, { $subtract: ['$iTot', 0.005] }] },
            { $gt: [{ $size: { $ifNull: ['$canceled', []] } }, 0] },
            { $gt: [{ $max: '$payments.date' }, q.asOf] },
            { $in: [true, { $ifNull: ['$payments.canceled', []] }] },
          ],
        },
      },
    },
    {
      $project: {
        id: 1,
        client: 1,
        clientName: 1,
        date: 1,
        iTot: 1,
        currency: 1,
        exchangeRate: 1,
        'invoice.uuid': 1,
        'invoice.paymentMethod': 1,
        canceled: { $filter: { input: { $ifNull: ['$canceled', []] }, as: 'c', cond: { $lte: ['$$c.date', q.asOf] } } },
        // Each payment's flag as it stood at asOf (a payment cancelled after it still counted then).
        payments: {
          $map: {
            input: { $filter: { input: { $ifNull: ['$payments', []] }, as: 'p', cond: { $lte: ['$$p.date', q.asOf] } } },
            as: 'p',
            in: { $mergeObjects: ['$$p', { canceled: paymentFlagHeldAtExpr(q.asOf) }] },
          },
        },
      },
    },
    { $match: { $expr: { $not: [invoiceCancelledExpr()] } } },
    {
      $addFields: {
        _cxUuids: {
          $map: {
            input: { $filter: { input: '$canceled', as: 'c', cond: { $and: [{ $eq: ['$$c.target', 'payment'] }, cancellationInEffectExpr('c')] } } },
            as: 'c',
            in: { $toLower: '$$c.uuid' },
          },
        },
      },
    },
    {
      $addFields: {
        _settledC: sumOver(
          {
            $filter: {
              input: '$payments',
              as: 'p',
              cond: { $and: [{ $ne: ['$$p.canceled', true] }, { $not: [{ $in: [{ $toLower: '$$p.uuid' }, '$_cxUuids'] }] }] },
            },
          },
          centsExpr('$$this.amount'),
        ),
      },
    },
    { $match: { $expr: { $gt: [{ $subtract: [centsExpr('$iTot'), '$_settledC'] }, 0] } } },
    { $project: { _cxUuids: 0, _settledC: 0 } },
  ];
  return financialDocs(db).aggregate<OpenInvoiceRow>(pipeline, { maxTimeMS, batchSize: AUDIT_BATCH_SIZE });
}

export interface PaymentHistoryRow {
  client: string;
  /** Invoice instant (epoch ms). */
  date: number;
  /** Instants of its valid payment complements dated in the window. */
  paid: number[];
}

/**
 * PPD invoices (a PUE invoice is paid when issued: its receipt is no complement) not cancelled
 * by `to`, with a payment complement (kind 'payment') dated in [from, to] and valid at `to`: its
 * flag as it stood then (paymentFlagHeldAtExpr: a payment cancelled after `to` still counted) and
 * not named by a payment cancellation record in effect dated by then. So an answer as of a past
 * day ignores the cancellations that took effect later, as streamOpenInvoices does. Each row
 * carries only the invoice date and those payment dates.
 */
export function streamPaymentHistory(
  db: Db,
  tenant: string,
  q: { from: number; to: number; client?: string },
  maxTimeMS: number,
): AsyncIterable<PaymentHistoryRow> {
  const pipeline: Document[] = [
    { $match: { company: tenant, ...(q.client ? { client: q.client } : {}), ...elementInRange('payments', 'date', q.from, q.to) } },
    { $match: { 'invoice.paymentMethod': { $ne: 'PUE' }, $expr: { $not: [invoiceCancelledExpr(q.to)] } } },
    {
      $project: {
        _id: 0,
        client: 1,
        date: 1,
        cx: paymentCancellationUuidsExpr('$lte', q.to),
        p: {
          $filter: {
            input: '$payments',
            as: 'p',
            cond: {
              $and: [{ $eq: ['$$p.kind', 'payment'] }, { $gte: ['$$p.date', q.from] }, { $lte: ['$$p.date', q.to] }, { $not: [paymentFlagHeldAtExpr(q.to)] }],
            },
          },
        },
      },
    },
    {
      $project: {
        client: 1,
        date: 1,
        paid: { $map: { input: { $filter: { input: '$p', as: 'p', cond: { $not: [{ $in: [{ $toLower: '$$p.uuid' }, '$cx'] }] } } }, as: 'p', in: '$$p.date' } },
      },
    },
  ];
  return financialDocs(db).aggregate<PaymentHistoryRow>(pipeline, { maxTimeMS, batchSize: AUDIT_BATCH_SIZE });
}

export interface ClientRevenueRow {
  client: string;
  cancelled: boolean;
  documents: number;
  /** Σ (SubTotal − Descuento − shortage deductions iFalt) in MXN cents: service revenue, indemnities are not sales. */
  revenueC: number;
  /** Σ Total in MXN cents. */
  totalC: number;
}

/**
 * Invoices emitted in [start, end] grouped by client and cancellation, summed in integer MXN
 * cents: grouped by exchange rate too (1 for MXN documents) and each group converted here.
 * Cancelled as of `asOf` (invoiceCancelledExpr(asOf): a cancellation in effect dated by then, so
 * an invoice whose cancellation took effect later is still revenue as of a past day); without
 * `asOf`, cancelled now by any record in effect.
 */
export async function revenueByClient(
  db: Db,
  tenant: string,
  q: { start: number; end: number; asOf?: number; client?: string },
  maxTimeMS: number,
): Promise<ClientRevenueRow[]> {
  const pipeline: Document[] = [
    { $match: { company: tenant, date: { $gte: q.start, $lte: q.end }, ...(q.client ? { client: q.client } : {}) } },
    {
      $project: {
        client: 1,
        cancelled: invoiceCancelledExpr(q.asOf),
        rate: { $ifNull: ['$exchangeRate', 1] },
        revenueC: { $subtract: [{ $subtract: [centsExpr('$iSub'), centsExpr('$iDesc')] }, centsExpr('$iFalt')] },
        totalC: centsExpr('$iTot'),
      },
    },
    {
      $group: {
        _id: { client: '$client', cancelled: '$cancelled', rate: '$rate' },
        documents: { $sum: 1 },
        revenueC: { $sum: '$revenueC' },
        totalC: { $sum: '$totalC' },
      },
    },
  ];
  const groups = await financialDocs(db)
    .aggregate<{ _id: { client: string; cancelled: boolean; rate: number }; documents: number; revenueC: number; totalC: number }>(pipeline, { maxTimeMS })
    .toArray();
  return clientRevenueRows(
    groups.map((g) => ({
      client: g._id.client,
      cancelled: g._id.cancelled === true,
      rate: g._id.rate,
      documents: g.documents,
      revenueC: g.revenueC,
      totalC: g.totalC,
    })),
  );
}

/** Invoices of one client, cancellation state and exchange rate, summed in integer cents of their own currency. */
export interface RevenueGroup {
  client: string;
  /** Cancelled (at the instant the group was judged at; in a kept day, at every instant). */
  cancelled: boolean;
  rate: number;
  /** In a kept day (receivables-day.ts): the instant (epoch ms) from which these invoices are cancelled (no longer revenue); absent: never, or always (`cancelled`). */
  until?: number;
  documents: number;
  revenueC: number;
  totalC: number;
}

/** Groups of one client and cancellation state merged, each group's sums converted to MXN cents once (as revenueByClient answers). */
export function clientRevenueRows(groups: Iterable<RevenueGroup>): ClientRevenueRow[] {
  const rows = new Map<string, ClientRevenueRow>();
  for (const g of groups) {
    const k = `${g.client}|${g.cancelled}`;
    const row = rows.get(k) ?? { client: g.client, cancelled: g.cancelled, documents: 0, revenueC: 0, totalC: 0 };
    row.documents += g.documents;
    row.revenueC += centsToMxnCents(g.revenueC, g.rate);
    row.totalC += centsToMxnCents(g.totalC, g.rate);
    rows.set(k, row);
  }
  return [...rows.values()];
}
