import type { Db, Document, Filter } from 'mongodb';
import { financialDocs } from './collections.ts';
import { findSortedPage, withAfter, type PageQuery } from './find-page.ts';
import { sortSpec, type KeysetSort } from './keyset.ts';
import type { FinancialDocument, StoredFinancialDocument } from '../model/financial-document.ts';
import type { InstantRange } from '../shared/date-range.ts';

export interface FinancialDocFilter {
  emitted?: InstantRange;
  client?: string;
  status?: number;
  uuid?: string;
  folio?: string;
  cancelled?: boolean;
  paymentStatus?: 'paid' | 'partial' | 'unpaid';
  /** ISO instant: documents whose `lastUpdate` is at or after it. */
  updatedSince?: string;
}

/** List orders: newest emission first (interface 4.1, id as tie-breaker); for sync, oldest change first. */
export const FINANCIAL_DOC_SORTS = {
  default: [{ field: 'date', dir: -1 }, { field: 'timestamp', dir: -1 }, { field: '_id', dir: -1 }],
  sync: [{ field: 'lastUpdate', dir: 1 }, { field: '_id', dir: 1 }],
} as const satisfies Record<string, KeysetSort>;

function baseFilter(tenant: string, f: FinancialDocFilter): Filter<StoredFinancialDocument> {
  // Tenant first, always: every query is scoped before anything else.
  const q: Filter<StoredFinancialDocument> = { company: tenant };
  if (f.emitted?.from !== undefined || f.emitted?.to !== undefined) {
    q.date = { ...(f.emitted.from !== undefined ? { $gte: f.emitted.from } : {}), ...(f.emitted.to !== undefined ? { $lte: f.emitted.to } : {}) };
  }
  if (f.client !== undefined) q.client = f.client;
  if (f.status !== undefined) q.status = f.status;
  // UUIDs are hex; CFDI XML carries them upper case but systems store either case.
  if (f.uuid !== undefined) q['invoice.uuid'] = { $in: [...new Set([f.uuid, f.uuid.toUpperCase(), f.uuid.toLowerCase()])] };
  if (f.folio !== undefined) q['invoice.num'] = f.folio;
  // ISO strings written by toISOString() order as the instants they name.
  if (f.updatedSince !== undefined) q.lastUpdate = { $gte: f.updatedSince };
  return q;
}

/**
 * Cancellation and payment state are derived from subdocuments, so those two
 * filters run as an aggregation that computes them the way lib/finance does:
 * an invoice is cancelled by a record naming its own UUID; payments count
 * unless flagged or named by a payment cancellation record.
 */
function derivedStateStages(f: FinancialDocFilter): Document[] {
  if (f.cancelled === undefined && f.paymentStatus === undefined) return [];
  const stages: Document[] = [
    {
      $addFields: {
        _cancelledPaymentUuids: {
          $map: { input: { $filter: { input: '$canceled', as: 'c', cond: { $eq: ['$$c.target', 'payment'] } } }, as: 'c', in: '$$c.uuid' },
        },
        _invoiceCancelled: {
          $gt: [{ $size: { $filter: { input: '$canceled', as: 'c', cond: { $and: [{ $eq: ['$$c.target', 'invoice'] }, { $eq: ['$$c.uuid', '$invoice.uuid'] }] } } } }, 0],
        },
      },
    },
    {
      $addFields: {
        _settled: {
          $reduce: {
            input: {
              $filter: {
                input: '$payments',
                as: 'p',
                cond: { $and: [{ $ne: ['$$p.canceled', true] }, { $not: [{ $in: ['$$p.uuid', '$_cancelledPaymentUuids'] }] }] },
              },
            },
            initialValue: 0,
            in: { $add: ['$$value', '$$this.amount'] },
          },
        },
      },
    },
  ];
  stages.push({ $addFields: { _pending: { $subtract: ['$iTot', '$_settled'] } } });
  // Half a cent absorbs float sums; a cancelled invoice is neither paid nor owed.
  const conditions: Document[] = [];
  if (f.cancelled !== undefined) conditions.push({ _invoiceCancelled: f.cancelled });
  if (f.paymentStatus === 'paid') conditions.push({ _invoiceCancelled: false }, { _pending: { $lt: 0.005 } });
  if (f.paymentStatus === 'partial') conditions.push({ _invoiceCancelled: false }, { _settled: { $gte: 0.005 } }, { _pending: { $gte: 0.005 } });
  if (f.paymentStatus === 'unpaid') conditions.push({ _invoiceCancelled: false }, { _settled: { $lt: 0.005 } });
  stages.push({ $match: { $and: conditions } }, { $project: { _cancelledPaymentUuids: 0, _invoiceCancelled: 0, _settled: 0, _pending: 0, ...CLIENT_PROJECTION } });
  return stages;
}

/** What is stored but never returned: the derived fields. */
const CLIENT_PROJECTION = { derivedPaymentStatus: 0 } as const satisfies Record<Exclude<keyof StoredFinancialDocument, keyof FinancialDocument>, 0>;

export async function findFinancialDocs(
  db: Db,
  tenant: string,
  filter: FinancialDocFilter,
  page: PageQuery,
  maxTimeMS: number,
): Promise<{ total: number | null; docs: FinancialDocument[] }> {
  const coll = financialDocs(db);
  const q = baseFilter(tenant, filter);
  const derived = derivedStateStages(filter);
  if (derived.length === 0) return findSortedPage(coll, q, page, maxTimeMS, CLIENT_PROJECTION);
  const [counted, docs] = await Promise.all([
    page.count ? coll.aggregate<{ n: number }>([{ $match: q }, ...derived, { $group: { _id: null, n: { $sum: 1 } } }], { maxTimeMS }).toArray() : null,
    coll.aggregate<FinancialDocument>([{ $match: withAfter(q, page) }, ...derived, { $sort: sortSpec(page.sort) }, { $skip: page.skip }, { $limit: page.limit }], { maxTimeMS }).toArray(),
  ]);
  return { total: counted ? (counted[0]?.n ?? 0) : null, docs };
}

/** The tenant's documents with these ids (one query for a whole page of trips). */
export async function findFinancialDocsByIds(db: Db, tenant: string, ids: string[], maxTimeMS: number): Promise<FinancialDocument[]> {
  if (ids.length === 0) return [];
  return financialDocs(db).find({ company: tenant, _id: { $in: ids } }, { maxTimeMS, projection: CLIENT_PROJECTION }).toArray();
}

/** One document of the tenant by id (null when missing or another tenant's). */
export async function findFinancialDocById(db: Db, tenant: string, id: string, maxTimeMS: number): Promise<FinancialDocument | null> {
  return financialDocs(db).findOne({ company: tenant, _id: id }, { maxTimeMS, projection: CLIENT_PROJECTION });
}
