/**
 * The tax position's totals kept on write (docs/rollups.md): one document per tenant and month
 * (`taxPositionMonths`) and the lines of its figures and its DIOT rows in answer order
 * (`taxPositionLines`). Keyed by tenant first; every read is an indexed find.
 */
import { deleteInBatches } from '../db/delete-in-batches.ts';
import { readAll } from '../db/read-all.ts';
import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { sameContent } from '../shared/same-content.ts';
import { taxPositionMonthId, type KeptFigure, type KeptMonth, type TaxPositionLineEntry, type TaxPositionMonthRollup } from './tax-position-rollup.ts';

const months = (db: Db): Collection<TaxPositionMonthRollup> => db.collection<TaxPositionMonthRollup>(COLLECTIONS.taxPositionMonths);
const lines = (db: Db): Collection<TaxPositionLineEntry> => db.collection<TaxPositionLineEntry>(COLLECTIONS.taxPositionLines);

/** Written per bulk: a month of a large tenant holds thousands of lines. */
const WRITE_BATCH = 1000;
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
  const stored = new Map((await readTaxPositionLinesOfMonths(db, tenant, [...kept.keys()], maxTimeMS)).map((e) => [e._id, e]));
  const entries = [...kept.values()].flatMap((k) => k.entries);
  const changed = entries.filter((e) => {
    const s = stored.get(e._id);
    return !s || !sameContent(s, e);
  });
  // By _id alone (it holds the tenant): the embedded engine finds an upsert's target by its _id index only when the filter is just _id.
  for (let i = 0; i < changed.length; i += WRITE_BATCH)
    await lines(db).bulkWrite(
      changed.slice(i, i + WRITE_BATCH).map((e) => ({ replaceOne: { filter: { _id: e._id }, replacement: e, upsert: true } })),
      durable,
    );
  const current = new Set(entries.map((e) => e._id));
  const gone = [...stored.keys()].filter((id) => !current.has(id));
  for (let i = 0; i < gone.length; i += WRITE_BATCH)
    await lines(db).deleteMany({ _id: { $in: gone.slice(i, i + WRITE_BATCH) } }, { writeConcern: { j: true } });
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
