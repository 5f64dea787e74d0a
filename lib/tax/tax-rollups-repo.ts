/**
 * The tax summary's totals kept on write (docs/rollups.md): one document per tenant and day
 * (`taxRollups`) and the findings of those days (`taxFindings`).
 */
import { deleteInBatches } from '../db/delete-in-batches.ts';
import { readAll } from '../db/read-all.ts';
import { replaceScoped } from '../db/replace-scoped.ts';
import type { Collection, Db, Filter } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import type { FindingKind } from './reconcile.ts';
import { taxRollupId, type IndexedFinding, type KeptTaxBasis, type TaxDayRollup } from './tax-day-rollup.ts';

const rollups = (db: Db): Collection<TaxDayRollup> => db.collection<TaxDayRollup>(COLLECTIONS.taxRollups);
const findings = (db: Db): Collection<IndexedFinding> => db.collection<IndexedFinding>(COLLECTIONS.taxFindings);

/**
 * The kept days (months, on the payment basis; a month's shares by day, paymentDay) of a tenant
 * within [from, to], in order (at most 367 documents: a period is at most 366 days).
 */
export function readTaxDays(db: Db, tenant: string, basis: KeptTaxBasis, from: string, to: string, maxTimeMS: number): Promise<TaxDayRollup[]> {
  return rollups(db)
    .find({ tenant, basis, day: { $gte: from, $lte: to } }, { maxTimeMS })
    .sort({ day: 1 })
    .toArray();
}

/** The keys of a tenant's kept days (months, shares) of a basis (verification): the keys alone. Index tenant_basis_day. */
export async function readTaxDayKeys(db: Db, tenant: string, basis: KeptTaxBasis, maxTimeMS: number): Promise<string[]> {
  return (await readAll(rollups(db).find({ tenant, basis }, { maxTimeMS, projection: { _id: 0, day: 1 } }))).map((d) => d.day);
}

/**
 * Replaces the kept days (a day without documents is removed) and their findings: the
 * invoice-basis days with the findings of those days, a payment-basis month's shares by day
 * (paymentDay) with the findings they hold (`bucket`), or payment-basis months alone (their
 * findings are their days'). Findings are upserted before the stale ones are removed, so a
 * reader racing this sees extra findings of a day still marked dirty, never missing ones of a
 * clean day.
 */
export async function writeTaxDays(
  db: Db,
  tenant: string,
  basis: KeptTaxBasis,
  days: readonly string[],
  kept: readonly TaxDayRollup[],
  dayFindings: readonly IndexedFinding[],
  maxTimeMS: number,
): Promise<void> {
  if (!days.length) return;
  const keptDays = new Set(kept.map((r) => r.day));
  const ops = [
    ...kept.map((r) => ({ replaceOne: { filter: { _id: r._id }, replacement: r, upsert: true } })),
    ...days.filter((d) => !keptDays.has(d)).map((d) => ({ deleteOne: { filter: { _id: taxRollupId(tenant, basis, d), tenant } } })),
  ];
  // Journaled: the engine holds a write's pages until a commit, and a rebuild writes a year at a
  // time; waiting for each run's commit keeps that bounded (on MongoDB, the usual durable write).
  const durable = { ordered: false, writeConcern: { j: true } } as const;
  await rollups(db).bulkWrite(ops, durable);
  if (basis === 'payment') return;
  await replaceScoped(findings(db), tenant, findingsScope(tenant, basis, days), dayFindings, maxTimeMS);
}

/** The findings of these invoice-basis days, or of these days' shares of payment-basis months. */
const findingsScope = (tenant: string, basis: 'invoice' | 'paymentDay', days: readonly string[]): Filter<IndexedFinding> =>
  basis === 'invoice' ? { tenant, basis, day: { $in: [...days] } } : { tenant, basis: 'payment', bucket: { $in: [...days] } };

export interface FindingsQuery {
  kind: FindingKind;
  client?: string;
  limit: number;
  /** Invoice basis: findings of documents emitted in [start, end]. */
  start: number;
  end: number;
  /** Payment basis: findings of the documents kept in this month (start/end ignored). */
  month?: string;
}

/**
 * The first `limit` findings of a kind, in the summary's listing order (invoice date, document,
 * concept, code). Index tenant_basis_[client_]kind_date, or tenant_basis_day_[client_]kind_date.
 */
export function listTaxFindings(db: Db, tenant: string, q: FindingsQuery, maxTimeMS: number): Promise<IndexedFinding[]> {
  const scope: Filter<IndexedFinding> = q.month === undefined ? { tenant, basis: 'invoice' } : { tenant, basis: 'payment', day: q.month };
  const filter: Filter<IndexedFinding> = {
    ...scope,
    ...(q.client === undefined ? {} : { client: q.client }),
    kind: q.kind,
    ...(q.month === undefined ? { dateMs: { $gte: q.start, $lte: q.end } } : {}),
  };
  return findings(db).find(filter, { maxTimeMS }).sort({ dateMs: 1, docId: 1, conceptIndex: 1, code: 1 }).limit(q.limit).toArray();
}

/** The kept findings of these invoice-basis days or payment-basis days' shares (verification). */
export function readTaxFindingsOfDays(
  db: Db,
  tenant: string,
  basis: 'invoice' | 'paymentDay',
  days: readonly string[],
  maxTimeMS: number,
): Promise<IndexedFinding[]> {
  return readAll(findings(db).find(findingsScope(tenant, basis, days), { maxTimeMS }));
}

/** Forgets a tenant's kept days and findings (its documents were deleted wholesale). */
export async function deleteTaxRollupsOf(db: Db, tenant: string): Promise<void> {
  await rollups(db).deleteMany({ tenant }, { writeConcern: { j: true } });
  await deleteInBatches(findings(db), { tenant });
}
