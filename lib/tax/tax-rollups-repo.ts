/**
 * The tax summary's totals kept on write (docs/rollups.md): one document per tenant and day
 * (`taxRollups`), the findings of those days (`taxFindings`), and per store which rollup
 * version was built (`rollupState`).
 */
import type { Collection, Db, Filter } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import type { FindingKind } from './reconcile.ts';
import type { IndexedFinding, TaxDayRollup } from './tax-day-rollup.ts';

export interface RollupState {
  _id: string;
  version: number;
  builtAt: Date;
}

const rollups = (db: Db): Collection<TaxDayRollup> => db.collection<TaxDayRollup>(COLLECTIONS.taxRollups);
const findings = (db: Db): Collection<IndexedFinding> => db.collection<IndexedFinding>(COLLECTIONS.taxFindings);
const state = (db: Db): Collection<RollupState> => db.collection<RollupState>(COLLECTIONS.rollupState);

/** The kept days of a tenant within [fromDay, toDay], in day order (at most 367 documents: a period is at most 366 days). */
export function readTaxDays(db: Db, tenant: string, fromDay: string, toDay: string, maxTimeMS: number): Promise<TaxDayRollup[]> {
  return rollups(db)
    .find({ tenant, basis: 'invoice', day: { $gte: fromDay, $lte: toDay } }, { maxTimeMS })
    .sort({ day: 1 })
    .toArray();
}

/**
 * Replaces the kept days (a day without documents is removed) and their findings. Findings are
 * upserted before the stale ones are removed, so a reader racing this sees extra findings of a
 * day still marked dirty, never missing ones of a clean day.
 */
export async function writeTaxDays(
  db: Db,
  tenant: string,
  days: readonly string[],
  kept: readonly TaxDayRollup[],
  dayFindings: readonly IndexedFinding[],
): Promise<void> {
  if (!days.length) return;
  const keptDays = new Set(kept.map((r) => r.day));
  const ops = [
    ...kept.map((r) => ({ replaceOne: { filter: { _id: r._id }, replacement: r, upsert: true } })),
    ...days.filter((d) => !keptDays.has(d)).map((d) => ({ deleteOne: { filter: { _id: `${tenant}|invoice|${d}`, tenant } } })),
  ];
  await rollups(db).bulkWrite(ops, { ordered: false });
  for (let i = 0; i < dayFindings.length; i += 1000) {
    await findings(db).bulkWrite(
      dayFindings.slice(i, i + 1000).map((f) => ({ replaceOne: { filter: { _id: f._id }, replacement: f, upsert: true } })),
      { ordered: false },
    );
  }
  const current = new Set(dayFindings.map((f) => f._id));
  const stale = await findings(db)
    .find({ tenant, day: { $in: [...days] } }, { projection: { _id: 1 } })
    .toArray();
  const gone = stale.map((f) => f._id).filter((id) => !current.has(id));
  for (let i = 0; i < gone.length; i += 1000) await findings(db).deleteMany({ _id: { $in: gone.slice(i, i + 1000) }, tenant });
}

export interface FindingsQuery {
  start: number;
  end: number;
  kind: FindingKind;
  client?: string;
  limit: number;
}

/** The first `limit` findings of a kind in [start, end], in the summary's listing order (index tenant_[client_]kind_date). */
export function listTaxFindings(db: Db, tenant: string, q: FindingsQuery, maxTimeMS: number): Promise<IndexedFinding[]> {
  const filter: Filter<IndexedFinding> =
    q.client === undefined
      ? { tenant, kind: q.kind, dateMs: { $gte: q.start, $lte: q.end } }
      : { tenant, client: q.client, kind: q.kind, dateMs: { $gte: q.start, $lte: q.end } };
  return findings(db).find(filter, { maxTimeMS }).sort({ dateMs: 1, docId: 1, conceptIndex: 1, code: 1 }).limit(q.limit).toArray();
}

export async function readRollupState(db: Db, name: string): Promise<RollupState | null> {
  return state(db).findOne({ _id: name });
}

export async function writeRollupState(db: Db, name: string, version: number): Promise<void> {
  await state(db).replaceOne({ _id: name }, { version, builtAt: new Date() }, { upsert: true });
}

/** The kept findings of these days (verification). */
export function readTaxFindingsOfDays(db: Db, tenant: string, days: readonly string[], maxTimeMS: number): Promise<IndexedFinding[]> {
  return findings(db)
    .find({ tenant, day: { $in: [...days] } }, { maxTimeMS })
    .toArray();
}

/** Forgets a tenant's kept days and findings (its documents were deleted wholesale). */
export async function deleteTaxRollupsOf(db: Db, tenant: string): Promise<void> {
  await Promise.all([rollups(db).deleteMany({ tenant }), findings(db).deleteMany({ tenant })]);
}
