/**
 * What the alert rules read: the tenant's financial documents and trips of a
 * period. Tenant first in every filter. Cursors are returned as async
 * iterables so a large portfolio is streamed, not loaded at once.
 */
import type { Db } from 'mongodb';
import { financialDocs, trips } from './collections.ts';
import type { FinancialDocument } from '../model/financial-document.ts';
import type { TripDocument } from '../model/trip-document.ts';

/** Documents emitted before `beforeMs` (exclusive), oldest first. */
export function docsEmittedBefore(db: Db, tenant: string, beforeMs: number, maxTimeMS: number): AsyncIterable<FinancialDocument> {
  return financialDocs(db).find({ company: tenant, date: { $lt: beforeMs } }, { maxTimeMS }).sort({ date: 1, timestamp: 1, _id: 1 }); // tenant_date, read backwards
}

/** Documents emitted in [fromMs, toExclusiveMs). */
export function docsEmittedBetween(db: Db, tenant: string, fromMs: number, toExclusiveMs: number, maxTimeMS: number): AsyncIterable<FinancialDocument> {
  return financialDocs(db).find({ company: tenant, date: { $gte: fromMs, $lt: toExclusiveMs } }, { maxTimeMS }).sort({ date: 1, timestamp: 1, _id: 1 });
}

/** Trips with at least one leg offloaded in [fromMs, toExclusiveMs). */
export async function tripsOffloadedBetween(db: Db, tenant: string, fromMs: number, toExclusiveMs: number, maxTimeMS: number): Promise<TripDocument[]> {
  return trips(db)
    .find({ company: tenant, shipments: { $elemMatch: { unloadDate: { $gte: fromMs, $lt: toExclusiveMs } } } }, { maxTimeMS })
    .sort({ createdAt: 1, _id: 1 })
    .toArray();
}

/** The tenant's documents with these ids (cancellation state needs `invoice` and `canceled` only). */
export async function docsByIds(db: Db, tenant: string, ids: readonly string[], maxTimeMS: number): Promise<FinancialDocument[]> {
  if (ids.length === 0) return [];
  return financialDocs(db)
    .find({ company: tenant, _id: { $in: [...ids] } }, { maxTimeMS, projection: { _id: 1, id: 1, company: 1, invoice: 1, canceled: 1 } })
    .toArray() as Promise<FinancialDocument[]>;
}
