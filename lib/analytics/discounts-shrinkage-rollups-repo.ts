/**
 * The discounts and shrinkage audit's kept forms (docs/rollups.md "Discounts and shrinkage"):
 * `discountDays` and `shrinkageDays` (one document per tenant and day) and `shrinkageFindings`
 * (one per leg beyond its tolerance).
 */
import { deleteInBatches } from '../db/delete-in-batches.ts';
import type { Collection, Db, Filter } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { discountDayId, type KeptDiscountDay } from './discount-days.ts';
import { shrinkageDayId, type KeptShrinkageDay, type ShrinkageFinding } from './shrinkage-days.ts';

const discountDays = (db: Db): Collection<KeptDiscountDay> => db.collection<KeptDiscountDay>(COLLECTIONS.discountDays);
const shrinkageDays = (db: Db): Collection<KeptShrinkageDay> => db.collection<KeptShrinkageDay>(COLLECTIONS.shrinkageDays);
const findings = (db: Db): Collection<ShrinkageFinding> => db.collection<ShrinkageFinding>(COLLECTIONS.shrinkageFindings);

/** The kept days of a tenant within [from, to], in order (a period: at most 366). */
export function readDiscountDays(db: Db, tenant: string, from: string, to: string, maxTimeMS: number): Promise<KeptDiscountDay[]> {
  return discountDays(db)
    .find({ tenant, day: { $gte: from, $lte: to } }, { maxTimeMS })
    .sort({ day: 1 })
    .toArray();
}

/** Replaces the kept days (a day without a non-cancelled invoice is removed). */
export async function writeDiscountDays(db: Db, tenant: string, days: readonly string[], kept: readonly KeptDiscountDay[]): Promise<void> {
  if (!days.length) return;
  const keptDays = new Set(kept.map((k) => k.day));
  const ops = [
    ...kept.map((k) => ({ replaceOne: { filter: { _id: k._id }, replacement: k, upsert: true } })),
    ...days.filter((d) => !keptDays.has(d)).map((d) => ({ deleteOne: { filter: { _id: discountDayId(tenant, d), tenant } } })),
  ];
  await discountDays(db).bulkWrite(ops, { ordered: false, writeConcern: { j: true } });
}

export function readShrinkageDays(db: Db, tenant: string, from: string, to: string, maxTimeMS: number): Promise<KeptShrinkageDay[]> {
  return shrinkageDays(db)
    .find({ tenant, day: { $gte: from, $lte: to } }, { maxTimeMS })
    .sort({ day: 1 })
    .toArray();
}

/**
 * Replaces the kept days and their findings: the findings first (upserted, then those of the
 * days no longer found removed), the day last, so a day kept under the current fingerprint
 * always has its findings written.
 */
export async function writeShrinkageDays(
  db: Db,
  tenant: string,
  days: readonly string[],
  kept: readonly KeptShrinkageDay[],
  found: readonly ShrinkageFinding[],
): Promise<void> {
  if (!days.length) return;
  if (found.length)
    await findings(db).bulkWrite(
      found.map((f) => ({ replaceOne: { filter: { _id: f._id }, replacement: f, upsert: true } })),
      { ordered: false, writeConcern: { j: true } },
    );
  await findings(db).deleteMany({ tenant, day: { $in: [...days] }, _id: { $nin: found.map((f) => f._id) } }, { writeConcern: { j: true } });
  const keptDays = new Set(kept.map((k) => k.day));
  const ops = [
    ...kept.map((k) => ({ replaceOne: { filter: { _id: k._id }, replacement: k, upsert: true } })),
    ...days.filter((d) => !keptDays.has(d)).map((d) => ({ deleteOne: { filter: { _id: shrinkageDayId(tenant, d), tenant } } })),
  ];
  await shrinkageDays(db).bulkWrite(ops, { ordered: false, writeConcern: { j: true } });
}

const periodFilter = (tenant: string, from: string, to: string, client: string | undefined): Filter<ShrinkageFinding> => ({
  tenant,
  ...(client !== undefined ? { client } : {}),
  day: { $gte: from, $lte: to },
});

/** Every finding of a tenant's days within [from, to] (one client when given): a period with few of them. */
export function readFindings(db: Db, tenant: string, from: string, to: string, client: string | undefined, maxTimeMS: number): Promise<ShrinkageFinding[]> {
  return findings(db)
    .find(periodFilter(tenant, from, to, client), { maxTimeMS })
    .sort({ day: 1 })
    .toArray();
}

/** The first `limit` findings of the period in the report's order (largest recoverable value first: worstFirst). */
export function readWorstFindings(
  db: Db,
  tenant: string,
  from: string,
  to: string,
  client: string | undefined,
  limit: number,
  maxTimeMS: number,
): Promise<ShrinkageFinding[]> {
  return findings(db)
    .find(periodFilter(tenant, from, to, client), { maxTimeMS })
    .sort({ valueC: -1, pct: -1, legId: 1, tripId: 1 })
    .limit(limit)
    .toArray();
}

/** Forgets a tenant's kept days and findings (a rebuild marks every day first). */
export async function deleteDiscountsShrinkageOf(db: Db, tenant: string): Promise<void> {
  await Promise.all([
    discountDays(db).deleteMany({ tenant }, { writeConcern: { j: true } }),
    shrinkageDays(db).deleteMany({ tenant }, { writeConcern: { j: true } }),
    deleteInBatches(findings(db), { tenant }),
  ]);
}
