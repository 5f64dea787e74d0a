import { financialDocDays, writeMarkingDays } from './financial-doc-days.ts';
import type { Db, Document, Filter } from 'mongodb';
import { financialDocs } from '../db/collections.ts';
import { centsExpr, invoiceCancelledExpr, paymentCancellationUuidsExpr, paymentFlagHeldAtExpr, sumOver } from '../db/pipeline.ts';
import { findSortedPage } from '../db/find-page.ts';
import { sharedRead } from '../db/shared-reads.ts';
import { mxDateString } from '../time/mexico-city.ts';
import type { KeysetSort, PageQuery } from '../shared/keyset.ts';
import type { CancellationStatus, FinancialDocument, StoredFinancialDocument } from '../model/financial-document.ts';
import type { InstantRange } from '../shared/date-range.ts';

export interface FinancialDocFilter {
  emitted?: InstantRange;
  client?: string;
  status?: number;
  uuid?: string;
  folio?: string;
  cancelled?: boolean;
  paymentStatus?: 'paid' | 'partial' | 'unpaid';
  cancellationStatus?: CancellationStatus;
  /** ISO instant: documents whose `lastUpdate` is at or after it. */
  updatedSince?: string;
  /** Epoch ms: only invoices open at that instant (emitted by then, not cancelled by then, a balance left by then). */
  openAsOf?: number;
}

/** List orders: newest emission first (interface 4.1, id as tie-breaker); for sync, oldest change first. */
export const FINANCIAL_DOC_SORTS = {
  default: [
    { field: 'date', dir: -1 },
    { field: 'timestamp', dir: -1 },
    { field: '_id', dir: -1 },
  ],
  sync: [
    { field: 'lastUpdate', dir: 1 },
    { field: '_id', dir: 1 },
  ],
} as const satisfies Record<string, KeysetSort>;

/**
 * Open at `asOf` (docs/domain.md "Receivables as of a date"), as one expression on the stored
 * document: not cancelled by then, and Total − the valid payments and credit notes dated by then
 * above zero, in integer cents (the rule of lib/finance/balance.ts on the records dated by then;
 * the receivables query of the forecast applies the same one).
 */
function openAsOfExpr(asOf: number): Document {
  const cancelledPayments = paymentCancellationUuidsExpr('$lte', asOf);
  const valid = {
    $filter: {
      input: { $ifNull: ['$payments', []] },
      as: 'p',
      cond: {
        $and: [{ $lte: ['$$p.date', asOf] }, { $not: [paymentFlagHeldAtExpr(asOf)] }, { $not: [{ $in: [{ $toLower: '$$p.uuid' }, cancelledPayments] }] }],
      },
    },
  };
  return { $and: [{ $not: [invoiceCancelledExpr(asOf)] }, { $gt: [{ $subtract: [centsExpr('$iTot'), sumOver(valid, centsExpr('$$this.amount'))] }, 0] }] };
}

function baseFilter(tenant: string, f: FinancialDocFilter): Filter<StoredFinancialDocument> {
  // Tenant first, always: every query is scoped before anything else.
  const q: Filter<StoredFinancialDocument> = { company: tenant };
  // Open as of an instant: emitted by then, whatever the emission range says.
  const to = f.openAsOf === undefined ? f.emitted?.to : Math.min(f.openAsOf, f.emitted?.to ?? Infinity);
  if (f.emitted?.from !== undefined || to !== undefined) {
    q.date = { ...(f.emitted?.from !== undefined ? { $gte: f.emitted.from } : {}), ...(to !== undefined ? { $lte: to } : {}) };
  }
  if (f.openAsOf !== undefined) q.$expr = openAsOfExpr(f.openAsOf);
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
 * The condition on the stored payment state (`derivedPaymentStatus`, written with every
 * document: lib/finance/derived-fields.ts) that the `paymentStatus` and `cancelled` filters make
 * together: undefined without either, null when they exclude each other. An index look-up
 * (`tenant_payment_status_date`) instead of a balance computed for every document of the tenant.
 */
function paymentStateCondition(f: FinancialDocFilter): Filter<StoredFinancialDocument>['derivedPaymentStatus'] | null | undefined {
  // paid, partial and unpaid are never 'cancelled': cancelled=false adds nothing, cancelled=true excludes all.
  if (f.paymentStatus !== undefined) return f.cancelled === true ? null : f.paymentStatus;
  if (f.cancelled === undefined) return undefined;
  // $ne rather than $in of the other three: the embedded engine then walks tenant_date for the page (docs/benchmarks.md).
  return f.cancelled ? 'cancelled' : { $ne: 'cancelled' };
}

/** What is stored but never returned: the derived fields. */
const CLIENT_PROJECTION = { derivedPaymentStatus: 0, derivedCancellationStatus: 0 } as const satisfies Record<
  Exclude<keyof StoredFinancialDocument, keyof FinancialDocument>,
  0
>;

export async function findFinancialDocs(
  db: Db,
  tenant: string,
  filter: FinancialDocFilter,
  page: PageQuery,
  maxTimeMS: number,
): Promise<{ total: number | null; docs: FinancialDocument[] }> {
  const q = baseFilter(tenant, filter);
  let stateFilter = filter;
  if (filter.cancellationStatus !== undefined) {
    // accepted and expired are exactly the cancelled invoices (payment state 'cancelled'): a
    // `cancelled` filter that agrees adds nothing (one index serves the page), one that does not,
    // or a `paymentStatus` with a cancelling status, matches nothing and no query is sent.
    const cancels = filter.cancellationStatus === 'accepted' || filter.cancellationStatus === 'expired';
    if ((filter.cancelled !== undefined && filter.cancelled !== cancels) || (filter.paymentStatus !== undefined && cancels))
      return { total: page.count ? 0 : null, docs: [] };
    q.derivedCancellationStatus = filter.cancellationStatus;
    stateFilter = { ...filter, cancelled: undefined };
  }
  const state = paymentStateCondition(stateFilter);
  if (state === null) return { total: page.count ? 0 : null, docs: [] };
  if (state !== undefined) q.derivedPaymentStatus = state;
  return findSortedPage(financialDocs(db), q, page, maxTimeMS, CLIENT_PROJECTION);
}

/** The tenant's documents with these ids (one query for a whole page of trips). */
export async function findFinancialDocsByIds(db: Db, tenant: string, ids: string[], maxTimeMS: number): Promise<FinancialDocument[]> {
  if (ids.length === 0) return [];
  return financialDocs(db)
    .find({ company: tenant, _id: { $in: ids } }, { maxTimeMS, projection: CLIENT_PROJECTION })
    .toArray();
}

/** One document of the tenant by id (null when missing or another tenant's). */
export async function findFinancialDocById(db: Db, tenant: string, id: string, maxTimeMS: number): Promise<FinancialDocument | null> {
  return financialDocs(db).findOne({ company: tenant, _id: id }, { maxTimeMS, projection: CLIENT_PROJECTION });
}

/**
 * Replaces one document of the tenant whole, only if it has not been written since it was read
 * (`lastUpdate` as read): a concurrent writer wins and this answers false, so nothing is lost.
 */
export async function replaceFinancialDocIfUnchanged(db: Db, doc: StoredFinancialDocument, readLastUpdate: string, maxTimeMS: number): Promise<boolean> {
  // The stored version shares the new one's days: a status answer changes no date.
  const res = await writeMarkingDays(db, doc.company, [doc], () =>
    financialDocs(db).replaceOne({ _id: doc._id, company: doc.company, lastUpdate: readLastUpdate }, doc, { maxTimeMS }),
  );
  return res.matchedCount === 1;
}

/**
 * Every tenant with financial documents, one index probe per tenant (`distinct` would read every
 * document on the embedded engine: a 100k-document tenant ran it out of heap).
 */
export async function tenantsWithDocuments(db: Db): Promise<string[]> {
  const tenants: string[] = [];
  for (;;) {
    const next = await financialDocs(db)
      // The first probe bounded too ($gte ''): the embedded engine walks an index for a range, but
      // sorted an empty filter's whole collection for its first document (5.7 s at 20k/20k).
      .find({ company: tenants.length ? { $gt: tenants[tenants.length - 1] as string } : { $gte: '' } }, { projection: { _id: 0, company: 1 } })
      .sort({ company: 1, date: -1, timestamp: -1, _id: -1 })
      .limit(1)
      .next();
    if (!next) return tenants;
    tenants.push(next.company);
  }
}

/** The days a tenant's financial documents touch (docs/rollups.md): what a rebuild of a kind over them marks. */
export interface FinancialDocHistoryDays {
  /** Their invoice dates. */
  dated: ReadonlySet<string>;
  /** Their invoice dates and every payment record's date (financialDocDays). */
  touched: ReadonlySet<string>;
}

/**
 * Reads every document of a tenant for its days (date and payment dates only). The kinds of one
 * rebuild of them all share the read (lib/db/shared-reads.ts): read-only.
 */
export function financialDocHistoryDays(db: Db, tenant: string): Promise<FinancialDocHistoryDays> {
  return sharedRead(`financialDocHistoryDays|${db.databaseName}|${tenant}`, async () => {
    const dated = new Set<string>();
    const touched = new Set<string>();
    const cursor = financialDocs(db).find({ company: tenant }, { projection: { _id: 0, date: 1, 'payments.date': 1 }, batchSize: 5000 });
    for await (const d of cursor) {
      if (Number.isFinite(d.date)) dated.add(mxDateString(d.date));
      for (const day of financialDocDays(d)) touched.add(day);
    }
    return { dated, touched };
  });
}
