/**
 * Fleet utilization's totals kept on write (docs/rollups.md), in `fleetRollups`: one document
 * per tenant and day (`day`), and per tenant, month and client (`month`, `client`, no `day`;
 * the month of every client has EVERY_CLIENT).
 */
import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { decodeFleetDay, encodeFleetDay, fleetRollupId, type FleetDayRollup, type StoredFleetDay } from './fleet-day-rollup.ts';
import { decodeFleetMonth, encodeFleetMonth, fleetMonthId, type FleetMonthRollup, type StoredFleetMonth } from './fleet-month-rollup.ts';

const rollups = (db: Db): Collection<StoredFleetDay> => db.collection<StoredFleetDay>(COLLECTIONS.fleetRollups);
const monthRollups = (db: Db): Collection<StoredFleetMonth> => db.collection<StoredFleetMonth>(COLLECTIONS.fleetRollups);

/** What a reader needs of a day or month: the report's sums, its first day's carry, the idle check's vehicles, the names, or everything (verification). */
export type FleetPart = 'sums' | 'carry' | 'fleet' | 'names' | 'all';

const DAY_PROJECTIONS: Record<FleetPart, Record<string, 0 | 1>> = {
  sums: { day: 1, units: 1, active: 1, starts: 1, bridges: 1 },
  carry: { day: 1, units: 1, carry: 1 },
  fleet: { day: 1, fleetUnits: 1, fleet: 1 },
  names: { _id: 0, day: 1 },
  all: {},
};

const MONTH_PROJECTIONS: Record<'sums' | 'fleet' | 'all', Record<string, 0 | 1>> = {
  sums: { month: 1, units: 1, rows: 1, pending: 1 },
  fleet: { month: 1, fleetUnits: 1, fleet: 1 },
  all: {},
};

const options = (projection: Record<string, 0 | 1>, maxTimeMS: number): { maxTimeMS: number; projection?: Record<string, 0 | 1> } =>
  Object.keys(projection).length ? { maxTimeMS, projection } : { maxTimeMS };

/** The stored days of a tenant within [from, to], in order, as kept (the report reads them in place; a month has no `day`). */
export function readStoredFleetDays(db: Db, tenant: string, from: string, to: string, part: FleetPart, maxTimeMS: number): Promise<StoredFleetDay[]> {
  if (to < from) return Promise.resolve([]);
  return rollups(db)
    .find({ tenant, day: { $gte: from, $lte: to } }, options(DAY_PROJECTIONS[part], maxTimeMS))
    .sort({ day: 1 })
    .toArray();
}

/** The same, decoded (verification). */
export async function readFleetDays(db: Db, tenant: string, from: string, to: string, maxTimeMS: number): Promise<FleetDayRollup[]> {
  return (await readStoredFleetDays(db, tenant, from, to, 'all', maxTimeMS)).map(decodeFleetDay);
}

/** One stored day's combinations and carry (a period's first day), or null when it is not kept. */
export function readStoredFleetCarry(db: Db, tenant: string, day: string, maxTimeMS: number): Promise<StoredFleetDay | null> {
  return rollups(db).findOne({ _id: fleetRollupId(tenant, day), tenant }, options(DAY_PROJECTIONS.carry, maxTimeMS));
}

/** These stored months of a tenant for one client (or EVERY_CLIENT), by id (those not kept are absent), in order. */
export async function readStoredFleetMonths(
  db: Db,
  tenant: string,
  months: readonly string[],
  client: string,
  part: 'sums' | 'fleet',
  maxTimeMS: number,
): Promise<StoredFleetMonth[]> {
  if (!months.length) return [];
  const kept = await monthRollups(db)
    .find({ _id: { $in: months.map((m) => fleetMonthId(tenant, m, client)) }, tenant }, options(MONTH_PROJECTIONS[part], maxTimeMS))
    .toArray();
  return kept.sort((a, z) => (a.month < z.month ? -1 : 1));
}

/** Every kept form of a tenant's month (every client's and each client's), decoded, by id: an `_id` range. */
export async function readFleetMonth(db: Db, tenant: string, month: string, maxTimeMS: number): Promise<FleetMonthRollup[]> {
  const prefix = fleetMonthId(tenant, month, '');
  const kept = await monthRollups(db)
    .find({ _id: { $gte: prefix, $lt: `${prefix}\uffff` }, tenant }, { maxTimeMS })
    .sort({ _id: 1 })
    .toArray();
  return kept.map(decodeFleetMonth);
}

/** The months a tenant's kept form holds. */
export async function fleetMonthNames(db: Db, tenant: string, maxTimeMS: number): Promise<string[]> {
  const months = await monthRollups(db)
    .find({ tenant, month: { $exists: true } }, { projection: { _id: 0, month: 1 }, maxTimeMS })
    .toArray();
  return [...new Set(months.map((m) => m.month))].sort();
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

/** Replaces a month's kept forms: those computed, and a client's no longer there removed. */
export async function writeFleetMonth(db: Db, tenant: string, month: string, kept: readonly FleetMonthRollup[], maxTimeMS: number): Promise<void> {
  const prefix = fleetMonthId(tenant, month, '');
  const stored = await monthRollups(db)
    .find({ _id: { $gte: prefix, $lt: `${prefix}\uffff` }, tenant }, { projection: { _id: 1 }, maxTimeMS })
    .toArray();
  const keptIds = new Set(kept.map((m) => m._id));
  const ops = [
    ...kept.map((m) => ({ replaceOne: { filter: { _id: m._id }, replacement: encodeFleetMonth(m), upsert: true } })),
    ...stored.filter((s) => !keptIds.has(s._id)).map((s) => ({ deleteOne: { filter: { _id: s._id, tenant } } })),
  ];
  if (ops.length) await monthRollups(db).bulkWrite(ops, { ordered: false, writeConcern: { j: true } });
}

/** Forgets a tenant's kept days and months (a rebuild marks every day first). */
export async function deleteFleetRollupsOf(db: Db, tenant: string): Promise<void> {
  await rollups(db).deleteMany({ tenant }, { writeConcern: { j: true } });
}
