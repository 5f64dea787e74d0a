/** Fleet utilization's days kept on write (docs/rollups.md): one document per tenant and day (`fleetRollups`). */
import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { decodeFleetDay, encodeFleetDay, fleetRollupId, type FleetDayRollup, type StoredFleetDay } from './fleet-day-rollup.ts';

const rollups = (db: Db): Collection<StoredFleetDay> => db.collection<StoredFleetDay>(COLLECTIONS.fleetRollups);

/** What a reader needs of a day: the report's sums, the idle check's vehicles, or everything (verification). */
export type FleetDayPart = 'sums' | 'fleet' | 'all';

const PROJECTIONS: Record<FleetDayPart, Record<string, 0 | 1>> = {
  sums: { day: 1, version: 1, units: 1, active: 1, pieces: 1, bridges: 1 },
  fleet: { day: 1, version: 1, fleetUnits: 1, fleet: 1 },
  all: {},
};

/** The kept days of a tenant within [from, to], in order (a period and its 31 days before: at most 398 documents). */
/** The stored days of a tenant within [from, to], in order, as kept (the report reads them in place). */
export function readStoredFleetDays(db: Db, tenant: string, from: string, to: string, part: FleetDayPart, maxTimeMS: number): Promise<StoredFleetDay[]> {
  const projection = PROJECTIONS[part];
  return rollups(db)
    .find({ tenant, day: { $gte: from, $lte: to } }, { maxTimeMS, ...(Object.keys(projection).length ? { projection } : {}) })
    .sort({ day: 1 })
    .toArray();
}

/** The same, decoded (verification). */
export async function readFleetDays(db: Db, tenant: string, from: string, to: string, part: FleetDayPart, maxTimeMS: number): Promise<FleetDayRollup[]> {
  return (await readStoredFleetDays(db, tenant, from, to, part, maxTimeMS)).map(decodeFleetDay);
}

/** Replaces the kept days (a day without activity is removed). */
export async function writeFleetDays(db: Db, tenant: string, days: readonly string[], kept: readonly FleetDayRollup[]): Promise<void> {
  if (!days.length) return;
  const keptDays = new Set(kept.map((r) => r.day));
  const ops = [
    ...kept.map((r) => ({ replaceOne: { filter: { _id: r._id }, replacement: encodeFleetDay(r), upsert: true } })),
    ...days.filter((d) => !keptDays.has(d)).map((d) => ({ deleteOne: { filter: { _id: fleetRollupId(tenant, d), tenant } } })),
  ];
  // Journaled, as the tax days: a rebuild writes a year at a time.
  await rollups(db).bulkWrite(ops, { ordered: false, writeConcern: { j: true } });
}

/** Forgets a tenant's kept days (a rebuild marks every day first). */
export async function deleteFleetRollupsOf(db: Db, tenant: string): Promise<void> {
  await rollups(db).deleteMany({ tenant }, { writeConcern: { j: true } });
}
