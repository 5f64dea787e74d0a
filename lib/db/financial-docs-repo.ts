import type { Db, Document, Filter } from 'mongodb';
import { financialDocs } from './collections.ts';
import { findPage } from './find-page.ts';
import type { FinancialDocument } from '../model/financial-document.ts';
import type { InstantRange } from '../shared/date-range.ts';

export interface FinancialDocFilter {
  emitted?: InstantRange;
  client?: string;
  status?: number;
  uuid?: string;
  folio?: string;
  cancelled?: boolean;
  paymentStatus?: 'paid' | 'partial' | 'unpaid';
}

const SORT = { date: -1, timestamp: -1, _id: -1 } as const;

function baseFilter(tenant: string, f: FinancialDocFilter): Filter<FinancialDocument> {
  // Tenant first, always: every query is scoped before anything else.
  const q: Filter<FinancialDocument> = { company: tenant };
  if (f.emitted?.from !== undefined || f.emitted?.to !== undefined) {
    q.date = { ...(f.emitted.from !== undefined ? { $gte: f.emitted.from } : {}), ...(f.emitted.to !== undefined ? { $lte: f.emitted.to } : {}) };
  }
  if (f.client !== undefined) q.client = f.client;
  if (f.status !== undefined) q.status = f.status;
  // UUIDs are hex; CFDI XML carries them upper case but systems store either case.
  if (f.uuid !== undefined) q['invoice.uuid'] = { $in: [...new Set([f.uuid, f.uuid.toUpperCase(), f.uuid.toLowerCase()])] };
  if (f.folio !== undefined) q['invoice.num'] = f.folio;
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
  stages.push({ $match: { $and: conditions } }, { $project: { _cancelledPaymentUuids: 0, _invoiceCancelled: 0, _settled: 0, _pending: 0 } });
  return stages;
}

export async function findFinancialDocs(
  db: Db,
  tenant: string,
  filter: FinancialDocFilter,
  window: { skip: number; limit: number },
  maxTimeMS: number,
): Promise<{ total: number; docs: FinancialDocument[] }> {
  const coll = financialDocs(db);
  const q = baseFilter(tenant, filter);
  const derived = derivedStateStages(filter);
  if (derived.length === 0) return findPage(coll, q, SORT, window, maxTimeMS);
  const pipeline = [{ $match: q }, ...derived];
  const [counted, docs] = await Promise.all([
    coll.aggregate<{ n: number }>([...pipeline, { $group: { _id: null, n: { $sum: 1 } } }], { maxTimeMS }).toArray(),
    coll.aggregate<FinancialDocument>([...pipeline, { $sort: SORT }, { $skip: window.skip }, { $limit: window.limit }], { maxTimeMS }).toArray(),
  ]);
  return { total: counted[0]?.n ?? 0, docs };
}

/** The tenant's documents with these ids (one query for a whole page of trips). */
export async function findFinancialDocsByIds(db: Db, tenant: string, ids: string[], maxTimeMS: number): Promise<FinancialDocument[]> {
  if (ids.length === 0) return [];
  return financialDocs(db).find({ company: tenant, _id: { $in: ids } }, { maxTimeMS }).toArray();
}

/** One document of the tenant by id (null when missing or another tenant's). */
export async function findFinancialDocById(db: Db, tenant: string, id: string, maxTimeMS: number): Promise<FinancialDocument | null> {
  return financialDocs(db).findOne({ company: tenant, _id: id }, { maxTimeMS });
}
