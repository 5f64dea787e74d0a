/**
 * The tax position's totals kept on write (docs/rollups.md): one document per tenant and day with
 * lines (`taxPositionDays`), one per tenant and month adding them up (`taxPositionMonths`), and
 * the lines of each day's figures and each month's DIOT rows in answer order (`taxPositionLines`).
 * Keyed by tenant first; every read is an indexed find.
 */
import { deleteInBatches } from '../db/delete-in-batches.ts';
import { readAll } from '../db/read-all.ts';
import { replaceScoped } from '../db/replace-scoped.ts';
import type { AnyBulkWriteOperation, Collection, Db, Filter } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import {
  taxPositionDayId,
  taxPositionMonthId,
  type KeptDay,
  type KeptFigure,
  type KeptMonth,
  type TaxPositionDayRollup,
  type TaxPositionLineEntry,
  type TaxPositionMonthRollup,
} from './tax-position-rollup.ts';

const days = (db: Db): Collection<TaxPositionDayRollup> => db.collection<TaxPositionDayRollup>(COLLECTIONS.taxPositionDays);
const months = (db: Db): Collection<TaxPositionMonthRollup> => db.collection<TaxPositionMonthRollup>(COLLECTIONS.taxPositionMonths);
const lines = (db: Db): Collection<TaxPositionLineEntry> => db.collection<TaxPositionLineEntry>(COLLECTIONS.taxPositionLines);

// Journaled: the engine holds a write's pages until a commit; a rebuild writes many days (as the tax summary's days).
const durable = { ordered: false, writeConcern: { j: true } } as const;

/** These kept months of a tenant (absent: nothing in it, or not kept yet). */
export function readTaxPositionMonths(db: Db, tenant: string, keys: readonly string[], maxTimeMS: number): Promise<TaxPositionMonthRollup[]> {
  return months(db)
    .find({ _id: { $in: keys.map((m) => taxPositionMonthId(tenant, m)) }, tenant }, { maxTimeMS })
    .toArray();
}

/** Every kept month of a tenant, in order (verification). */
export function readAllTaxPositionMonths(db: Db, tenant: string, maxTimeMS: number): Promise<TaxPositionMonthRollup[]> {
  return months(db).find({ tenant }, { maxTimeMS }).sort({ month: 1 }).toArray();
}

/** The kept days of a tenant in [from, to] (days 'YYYY-MM-DD', inclusive). Index tenant_day. */
export function readTaxPositionDays(db: Db, tenant: string, from: string, to: string, maxTimeMS: number): Promise<TaxPositionDayRollup[]> {
  return readAll(days(db).find({ tenant, day: { $gte: from, $lte: to } }, { maxTimeMS }));
}

/** These kept days of a tenant (a recompute's comparison). */
export function readTaxPositionDaysOf(db: Db, tenant: string, keys: readonly string[], maxTimeMS: number): Promise<TaxPositionDayRollup[]> {
  return readAll(days(db).find({ _id: { $in: keys.map((d) => taxPositionDayId(tenant, d)) }, tenant }, { maxTimeMS }));
}

/** The days a tenant's kept form holds (verification). Index tenant_day. */
export async function readAllTaxPositionDayKeys(db: Db, tenant: string, maxTimeMS: number): Promise<string[]> {
  return (await readAll(days(db).find({ tenant }, { maxTimeMS, projection: { _id: 0, day: 1 } }))).map((d) => d.day);
}

/**
 * The lines of one figure of a day (or the DIOT rows of a month: `bucket` is the month) with rank
 * in [from, to), in order. Index tenant_bucket_figure_rank.
 */
export function readTaxPositionLines(
  db: Db,
  tenant: string,
  bucket: string,
  figure: KeptFigure | 'diot',
  from: number,
  to: number,
  maxTimeMS: number,
): Promise<TaxPositionLineEntry[]> {
  if (to <= from) return Promise.resolve([]);
  return lines(db)
    .find({ tenant, bucket, figure, rank: { $gte: from, $lt: to } }, { maxTimeMS })
    .sort({ rank: 1 })
    .toArray();
}

/** Every kept line or row of these days or months (a recompute's comparison, verification). Index tenant_bucket_figure_rank. */
export function readTaxPositionLinesOf(db: Db, tenant: string, buckets: readonly string[], maxTimeMS: number): Promise<TaxPositionLineEntry[]> {
  return readAll(lines(db).find({ tenant, bucket: { $in: [...buckets] } }, { maxTimeMS }));
}

/**
 * Keeps days or months as computed: their lines (a day's) or DIOT rows (a month's) that changed
 * are replaced and those no longer computed removed, then their documents written (or removed
 * when nothing is in one). Idempotent: two recomputes of the same documents write the same thing.
 */
async function writeKept<D extends { _id: string; tenant: string }>(
  db: Db,
  coll: Collection<D>,
  tenant: string,
  kept: ReadonlyMap<string, { doc: D | null; entries: readonly TaxPositionLineEntry[] }>,
  idOf: (tenant: string, key: string) => string,
  maxTimeMS: number,
): Promise<void> {
  if (!kept.size) return;
  const entries = [...kept.values()].flatMap((k) => k.entries);
  await replaceScoped(lines(db), tenant, { tenant, bucket: { $in: [...kept.keys()] } }, entries, maxTimeMS);
  const ops: AnyBulkWriteOperation<D>[] = [...kept].map(([key, k]) =>
    k.doc
      ? { replaceOne: { filter: { _id: k.doc._id, tenant } as Filter<D>, replacement: k.doc, upsert: true } }
      : { deleteOne: { filter: { _id: idOf(tenant, key), tenant } as Filter<D> } },
  );
  await coll.bulkWrite(ops, durable);
}

/** Keeps days as computed (a write's, or a rebuild's run): their lines, then their figures. */
export const writeTaxPositionDays = (db: Db, tenant: string, kept: ReadonlyMap<string, KeptDay>, maxTimeMS: number): Promise<void> =>
  writeKept(db, days(db), tenant, new Map([...kept].map(([day, k]) => [day, { doc: k.day, entries: k.entries }])), taxPositionDayId, maxTimeMS);

/** Keeps months as added up from their days: their DIOT rows, then their figures. */
export const writeTaxPositionMonths = (db: Db, tenant: string, kept: ReadonlyMap<string, KeptMonth>, maxTimeMS: number): Promise<void> =>
  writeKept(db, months(db), tenant, new Map([...kept].map(([month, k]) => [month, { doc: k.month, entries: k.entries }])), taxPositionMonthId, maxTimeMS);

/** Forgets a tenant's kept days, months and lines (a rebuild starts from none). */
export async function deleteTaxPositionOf(db: Db, tenant: string): Promise<void> {
  await months(db).deleteMany({ tenant }, { writeConcern: { j: true } });
  await days(db).deleteMany({ tenant }, { writeConcern: { j: true } });
  await deleteInBatches(lines(db), { tenant });
}
