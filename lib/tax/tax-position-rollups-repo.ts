/**
 * The tax position's totals kept on write (docs/rollups.md): one document per tenant and month
 * (`taxPositionMonths`) and the lines of its figures and its DIOT rows in answer order
 * (`taxPositionLines`). Keyed by tenant first; every read is an indexed find.
 */
import { deleteInBatches } from '../db/delete-in-batches.ts';
import { readAll } from '../db/read-all.ts';
import { replaceScoped } from '../db/replace-scoped.ts';
import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { taxPositionMonthId, type KeptFigure, type KeptMonth, type TaxPositionLineEntry, type TaxPositionMonthRollup } from './tax-position-rollup.ts';

const months = (db: Db): Collection<TaxPositionMonthRollup> => db.collection<TaxPositionMonthRollup>(COLLECTIONS.taxPositionMonths);
const lines = (db: Db): Collection<TaxPositionLineEntry> => db.collection<TaxPositionLineEntry>(COLLECTIONS.taxPositionLines);

// Journaled: the engine holds a write's pages until a commit; a rebuild writes many months (as the tax summary's days).
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

/** The lines of one figure (or the DIOT rows) of a month with rank in [from, to), in order. Index tenant_month_figure_rank. */
export function readTaxPositionLines(
  db: Db,
  tenant: string,
  month: string,
  figure: KeptFigure | 'diot',
  from: number,
  to: number,
  maxTimeMS: number,
): Promise<TaxPositionLineEntry[]> {
  if (to <= from) return Promise.resolve([]);
  return lines(db)
    .find({ tenant, month, figure, rank: { $gte: from, $lt: to } }, { maxTimeMS })
    .sort({ rank: 1 })
    .toArray();
}

/** Every kept line and row of these months (a recompute's comparison, verification). Index tenant_month_figure_rank. */
export function readTaxPositionLinesOfMonths(db: Db, tenant: string, keys: readonly string[], maxTimeMS: number): Promise<TaxPositionLineEntry[]> {
  return readAll(lines(db).find({ tenant, month: { $in: [...keys] } }, { maxTimeMS }));
}

/**
 * Keeps months as computed (one, or a rebuild's run): the lines that changed are replaced, those
 * beyond the new counts removed, then the months' figures written (or removed when nothing is in
 * a month). Idempotent: two recomputes of the same documents write the same thing.
 */
export async function writeTaxPositionMonths(db: Db, tenant: string, kept: ReadonlyMap<string, KeptMonth>, maxTimeMS: number): Promise<void> {
  if (!kept.size) return;
  const entries = [...kept.values()].flatMap((k) => k.entries);
  await replaceScoped(lines(db), tenant, { tenant, month: { $in: [...kept.keys()] } }, entries, maxTimeMS);
  const ops = [...kept].map(([month, k]) =>
    k.month
      ? { replaceOne: { filter: { _id: k.month._id, tenant }, replacement: k.month, upsert: true } }
      : { deleteOne: { filter: { _id: taxPositionMonthId(tenant, month), tenant } } },
  );
  await months(db).bulkWrite(ops, durable);
}

/** Forgets a tenant's kept months and lines (a rebuild starts from none). */
export async function deleteTaxPositionOf(db: Db, tenant: string): Promise<void> {
  await months(db).deleteMany({ tenant }, { writeConcern: { j: true } });
  await deleteInBatches(lines(db), { tenant });
}
