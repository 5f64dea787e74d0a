/**
 * What the alert rules read: the tenant's financial documents and trips of a
 * period. Tenant first in every filter. Cursors are returned as async
 * iterables so a large portfolio is streamed, not loaded at once.
 */
import type { Db } from 'mongodb';
import { financialDocs, trips } from '../db/collections.ts';
import type { FinancialDocument } from '../model/financial-document.ts';
import { TRIP_DERIVED_FIELDS_OUT, type TripDocument } from '../model/trip-document.ts';

/** What a balance and its due date read of a document (the overdue-invoices rule): no concepts, no taxes. */
export type DocumentBalanceFields = Pick<FinancialDocument, '_id' | 'id' | 'client' | 'date' | 'exchangeRate' | 'iTot' | 'payments' | 'canceled'> & {
  invoice: Pick<FinancialDocument['invoice'], 'uuid' | 'num'>;
};
const BALANCE_PROJECTION = {
  _id: 1,
  id: 1,
  client: 1,
  date: 1,
  exchangeRate: 1,
  iTot: 1,
  payments: 1,
  canceled: 1,
  'invoice.uuid': 1,
  'invoice.num': 1,
} as const;

/**
 * Documents emitted before `beforeMs` (exclusive), oldest first, with only their balance fields:
 * the rule runs once per user's job over the tenant's whole history, and a CFDI's concepts and
 * taxes are most of its bytes.
 */
export function docsEmittedBefore(db: Db, tenant: string, beforeMs: number, maxTimeMS: number): AsyncIterable<DocumentBalanceFields> {
  return financialDocs(db)
    .find<DocumentBalanceFields>({ company: tenant, date: { $lt: beforeMs } }, { maxTimeMS, projection: BALANCE_PROJECTION })
    .sort({ date: 1, timestamp: 1, _id: 1 }); // tenant_date, read backwards
}

/** Documents emitted in [fromMs, toExclusiveMs). */
export function docsEmittedBetween(db: Db, tenant: string, fromMs: number, toExclusiveMs: number, maxTimeMS: number): AsyncIterable<FinancialDocument> {
  return financialDocs(db)
    .find({ company: tenant, date: { $gte: fromMs, $lt: toExclusiveMs } }, { maxTimeMS })
    .sort({ date: 1, timestamp: 1, _id: 1 });
}

/** Trips with at least one leg offloaded in [fromMs, toExclusiveMs). */
export async function tripsOffloadedBetween(db: Db, tenant: string, fromMs: number, toExclusiveMs: number, maxTimeMS: number): Promise<TripDocument[]> {
  return trips(db)
    .find<TripDocument>(
      { company: tenant, shipments: { $elemMatch: { unloadDate: { $gte: fromMs, $lt: toExclusiveMs } } } },
      { maxTimeMS, projection: TRIP_DERIVED_FIELDS_OUT },
    )
    .sort({ createdAt: 1, _id: 1 })
    .toArray();
}

/** The tenant's documents with these ids (cancellation state needs `invoice` and `canceled` only). */
export async function docsByIds(db: Db, tenant: string, ids: readonly string[], maxTimeMS: number): Promise<FinancialDocument[]> {
  if (ids.length === 0) return [];
  return financialDocs(db)
    .find({ company: tenant, _id: { $in: [...ids] } }, { maxTimeMS, projection: { _id: 1, id: 1, company: 1, invoice: 1, canceled: 1 } })
    .toArray();
}
