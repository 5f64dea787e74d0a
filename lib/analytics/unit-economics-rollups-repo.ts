/** Unit economics' days kept on write (docs/rollups.md): one document per tenant and day (`unitEconomicsRollups`). */
import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { unitEconomicsDayId, type UnitEconomicsDay } from './unit-economics-day.ts';

const rollups = (db: Db): Collection<UnitEconomicsDay> => db.collection<UnitEconomicsDay>(COLLECTIONS.unitEconomicsRollups);

/** The kept days of a tenant within [from, to], in order (a report's period: at most 366 documents). */
export function readUnitEconomicsDays(db: Db, tenant: string, from: string, to: string, maxTimeMS: number): Promise<UnitEconomicsDay[]> {
  return rollups(db)
    .find({ tenant, day: { $gte: from, $lte: to } }, { maxTimeMS })
    .sort({ day: 1 })
    .toArray();
}

/** Replaces the kept days (a day without delivered legs or cost documents is removed). */
export async function writeUnitEconomicsDays(db: Db, tenant: string, days: readonly string[], kept: readonly UnitEconomicsDay[]): Promise<void> {
  if (!days.length) return;
  const keptDays = new Set(kept.map((r) => r.day));
  const ops = [
    ...kept.map((r) => ({ replaceOne: { filter: { _id: r._id, tenant }, replacement: r, upsert: true } })),
    ...days.filter((d) => !keptDays.has(d)).map((d) => ({ deleteOne: { filter: { _id: unitEconomicsDayId(tenant, d), tenant } } })),
  ];
  await rollups(db).bulkWrite(ops, { ordered: false, writeConcern: { j: true } });
}

/** Forgets a tenant's kept days (a rebuild marks every day first). */
export async function deleteUnitEconomicsDaysOf(db: Db, tenant: string): Promise<void> {
  await rollups(db).deleteMany({ tenant }, { writeConcern: { j: true } });
}
