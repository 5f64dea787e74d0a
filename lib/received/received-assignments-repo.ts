/**
 * The carrier's assignments of received CFDIs to a vehicle or a trip (collection
 * `receivedAssignments`, one record per received document, `_id` = the document's id). Kept
 * apart from `receivedDocs`, which is rebuilt whole from the CFDI's facts: an assignment
 * survives a re-import. Also the cost documents of a period, as the unit-economics audit reads them.
 */
import type { Collection, Db, Document } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { AUDIT_BATCH_SIZE } from '../db/pipeline.ts';
import type { ReceivedCategory } from '../model/tenant-settings.ts';
import type { CreditNoteTaxes } from '../finance/ledger/facts.ts';
import { receivedDocs } from './received-repo.ts';

export interface ReceivedAssignmentRow {
  _id: string;
  tenant: string;
  vehicle: string | null;
  tripId: string | null;
  assignedAt: string;
}

export const receivedAssignments = (db: Db): Collection<ReceivedAssignmentRow> => db.collection<ReceivedAssignmentRow>(COLLECTIONS.receivedAssignments);

/** Writes many assignments (whole-record upserts) and removes others, in one unordered bulk. */
export async function writeAssignments(db: Db, tenant: string, set: readonly ReceivedAssignmentRow[], remove: readonly string[]): Promise<void> {
  const ops = [
    ...set.map((r) => ({ replaceOne: { filter: { _id: r._id, tenant }, replacement: r, upsert: true } })),
    ...remove.map((id) => ({ deleteOne: { filter: { _id: id, tenant } } })),
  ];
  if (ops.length) await receivedAssignments(db).bulkWrite(ops, { ordered: false });
}

/** The tenant's assignments of these documents, by document id. */
export async function findAssignments(db: Db, tenant: string, ids: readonly string[], maxTimeMS: number): Promise<Map<string, ReceivedAssignmentRow>> {
  if (!ids.length) return new Map();
  const rows = await receivedAssignments(db)
    .find({ _id: { $in: [...new Set(ids)] }, tenant }, { maxTimeMS })
    .toArray();
  return new Map(rows.map((r) => [r._id, r]));
}

/** The tenant's received documents by id (UUID, issue date, cancellation, its settlements' kinds and dates: its credit notes' days), for the assignment CSV. */
export async function findReceivedByUuids(
  db: Db,
  tenant: string,
  ids: readonly string[],
  maxTimeMS: number,
): Promise<Map<string, { _id: string; uuid: string; paymentState: string; date: number; settlements: { kind: string; date: number }[] }>> {
  if (!ids.length) return new Map();
  const rows = await receivedDocs(db)
    .find(
      { _id: { $in: [...new Set(ids)] }, tenant },
      { maxTimeMS, projection: { _id: 1, uuid: 1, paymentState: 1, date: 1, 'settlements.kind': 1, 'settlements.date': 1 } },
    )
    .toArray();
  return new Map(
    rows.map((r) => [
      r._id,
      { _id: r._id, uuid: r.uuid, paymentState: r.paymentState, date: r.date, settlements: (r.settlements ?? []).map((s) => ({ kind: s.kind, date: s.date })) },
    ]),
  );
}

/** One received document as the costs read it (amounts in its currency). */
export interface CostDocRow {
  _id: string;
  /** Issue instant (epoch ms). */
  date: number;
  category: ReceivedCategory;
  subTotal: number;
  discount: number;
  exchangeRate: number;
  descriptions: string[];
  vehicle: string | null;
  tripId: string | null;
}

/**
 * The tenant's received documents issued in [start, end] and not cancelled, of these categories,
 * each with the carrier's assignment (an `_id` lookup, kept only when it is the tenant's), as
 * they arrive (index tenant_category_date).
 */
export function streamCostDocs(
  db: Db,
  tenant: string,
  q: { start: number; end: number; categories: readonly ReceivedCategory[] },
  maxTimeMS: number,
): AsyncIterable<CostDocRow> {
  const pipeline: Document[] = [
    { $match: { tenant, category: { $in: [...q.categories] }, date: { $gte: q.start, $lte: q.end }, paymentState: { $ne: 'cancelled' } } },
    { $lookup: { from: COLLECTIONS.receivedAssignments, localField: '_id', foreignField: '_id', as: 'a' } },
    {
      $project: {
        date: 1,
        category: 1,
        subTotal: 1,
        discount: { $ifNull: ['$discount', 0] },
        exchangeRate: { $ifNull: ['$exchangeRate', 1] },
        descriptions: { $map: { input: { $ifNull: ['$concepts', []] }, as: 'c', in: { $ifNull: ['$$c.description', ''] } } },
        // The tenant is a $literal: in an expression a string beginning with `$` is a field.
        a: { $filter: { input: '$a', as: 'x', cond: { $eq: ['$$x.tenant', { $literal: tenant }] } } },
      },
    },
    {
      $project: {
        date: 1,
        category: 1,
        subTotal: 1,
        discount: 1,
        exchangeRate: 1,
        descriptions: 1,
        vehicle: { $ifNull: [{ $arrayElemAt: ['$a.vehicle', 0] }, null] },
        tripId: { $ifNull: [{ $arrayElemAt: ['$a.tripId', 0] }, null] },
      },
    },
  ];
  return receivedDocs(db).aggregate<CostDocRow>(pipeline, { maxTimeMS, batchSize: AUDIT_BATCH_SIZE });
}

/** A received CFDI with its suppliers' credit notes of a period (streamCreditNoteRows): in the invoice's currency. */
export type CreditNoteRow = Pick<CostDocRow, 'category' | 'subTotal' | 'discount' | 'exchangeRate' | 'descriptions'> & {
  total: number;
  notes: { date: number; amount: number; exchangeRate?: number; taxes?: CreditNoteTaxes }[];
  a: { vehicle?: string | null; tripId?: string | null }[];
};

/**
 * The tenant's suppliers' credit notes (a received CFDI's settlements of kind `creditNote`, not
 * cancelled) issued in [start, end] on invoices of these categories that are not cancelled, each
 * with its invoice's category, concepts and assignment, as they arrive (index tenant_settlement_date).
 * The import takes a received note relating exactly one invoice (TipoRelacion 01): each is its
 * invoice's alone.
 */
export function streamCreditNoteRows(
  db: Db,
  tenant: string,
  q: { start: number; end: number; categories: readonly ReceivedCategory[] },
  maxTimeMS: number,
): AsyncIterable<CreditNoteRow> {
  const pipeline: Document[] = [
    { $match: { tenant, 'settlements.date': { $gte: q.start, $lte: q.end } } },
    { $match: { category: { $in: [...q.categories] }, paymentState: { $ne: 'cancelled' } } },
    {
      $project: {
        category: 1,
        subTotal: 1,
        discount: { $ifNull: ['$discount', 0] },
        total: 1,
        exchangeRate: { $ifNull: ['$exchangeRate', 1] },
        descriptions: { $map: { input: { $ifNull: ['$concepts', []] }, as: 'c', in: { $ifNull: ['$$c.description', ''] } } },
        notes: {
          $filter: {
            input: { $ifNull: ['$settlements', []] },
            as: 's',
            cond: {
              $and: [{ $eq: ['$$s.kind', 'creditNote'] }, { $ne: ['$$s.cancelled', true] }, { $gte: ['$$s.date', q.start] }, { $lte: ['$$s.date', q.end] }],
            },
          },
        },
      },
    },
    { $match: { 'notes.0': { $exists: true } } },
    { $lookup: { from: COLLECTIONS.receivedAssignments, localField: '_id', foreignField: '_id', as: 'a' } },
    {
      $project: {
        category: 1,
        subTotal: 1,
        discount: 1,
        total: 1,
        exchangeRate: 1,
        descriptions: 1,
        notes: { $map: { input: '$notes', as: 's', in: { date: '$$s.date', amount: '$$s.amount', exchangeRate: '$$s.exchangeRate', taxes: '$$s.taxes' } } },
        // The tenant is a $literal: in an expression a string beginning with `$` is a field.
        a: { $filter: { input: '$a', as: 'x', cond: { $eq: ['$$x.tenant', { $literal: tenant }] } } },
      },
    },
  ];
  return receivedDocs(db).aggregate<CreditNoteRow>(pipeline, { maxTimeMS, batchSize: AUDIT_BATCH_SIZE });
}
