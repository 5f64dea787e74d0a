import type { Db, Document, Filter } from 'mongodb';
import { financialDocs } from '../db/collections.ts';
import type { FinancialDocument } from '../model/financial-document.ts';
import { elementInRange } from '../db/pipeline.ts';

export interface TaxDocsQuery {
  /** `either`: the documents of both bases at once (one read where both are computed). */
  basis: 'invoice' | 'payment' | 'either';
  /** Inclusive instants. */
  start: number;
  end: number;
  client?: string;
}

/** What the reconciliation reads of a document; everything else stays in the database. */
const PROJECTION = {
  _id: 1,
  id: 1,
  company: 1,
  client: 1,
  clientName: 1,
  date: 1,
  currency: 1,
  exchangeRate: 1,
  taxTotals: 1,
  localTaxes: 1,
  iSub: 1,
  iTot: 1,
  iTax1: 1,
  iTax2: 1,
  iDesc: 1,
  iFalt: 1,
  'invoice.uuid': 1,
  'invoice.paymentMethod': 1,
  'invoice.ship': 1,
  'invoice.concepts': 1,
  canceled: 1,
} as const;

/**
 * Documents of one tenant in scope of a tax summary, streamed (a cursor, not
 * an array): invoice basis = emitted in the period; payment basis = PUE
 * invoices emitted in the period plus any invoice with a payment record dated
 * in it (cancelled records are judged in JS); either = emitted in the period
 * or with a payment record dated in it. Tenant first in every clause, so
 * each `$or` branch can use its own index (tenant_date, tenant_payment_date).
 */
export function streamTaxDocs(db: Db, tenant: string, q: TaxDocsQuery, maxTimeMS: number): AsyncIterable<FinancialDocument> {
  const range = { $gte: q.start, $lte: q.end };
  const clientFilter = q.client === undefined ? {} : { client: q.client };
  const filter: Filter<FinancialDocument> =
    q.basis === 'invoice'
      ? { company: tenant, date: range, ...clientFilter }
      : {
          company: tenant,
          ...clientFilter,
          $or: [
            q.basis === 'payment' ? { company: tenant, 'invoice.paymentMethod': 'PUE', date: range } : { company: tenant, date: range },
            { company: tenant, ...elementInRange('payments', 'date', q.start, q.end) },
          ],
        };
  const projection: Document = q.basis === 'invoice' ? PROJECTION : { ...PROJECTION, payments: 1 };
  return financialDocs(db).find(filter, { projection, maxTimeMS, batchSize: 1000 }) as AsyncIterable<FinancialDocument>;
}

/**
 * Whether a document streamTaxDocs read for a wider period is one its payment-basis query selects
 * for [start, end] (inclusive instants): PUE emitted in it, or a payment record dated in it. A
 * read of many months at once splits its documents with this (a cancelled document counts in
 * whichever month selects it).
 */
export function inPaymentBasisPeriod(doc: FinancialDocument, start: number, end: number): boolean {
  const within = (t: unknown): boolean => typeof t === 'number' && t >= start && t <= end;
  if (doc.invoice?.paymentMethod === 'PUE' && within(doc.date)) return true;
  return Array.isArray(doc.payments) && doc.payments.some((p) => within(p?.date));
}

/** These documents of the tenant, projected as the reconciliation reads them (the findings a summary lists). */
export function findTaxDocsByIds(db: Db, tenant: string, ids: readonly string[], maxTimeMS: number): Promise<FinancialDocument[]> {
  if (!ids.length) return Promise.resolve([]);
  return financialDocs(db)
    .find({ company: tenant, _id: { $in: [...new Set(ids)] } }, { projection: PROJECTION, maxTimeMS })
    .toArray();
}
