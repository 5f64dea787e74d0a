/**
 * Fleet utilization's totals kept on write (docs/rollups.md), in `fleetRollups`: one document
 * per tenant and day (`day`), and per tenant, month and client (`month`, `client`, no `day`;
 * the month of every client has EVERY_CLIENT).
 */
import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { replaceScoped } from '../db/replace-scoped.ts';
import { decodeFleetDay, encodeFleetDay, fleetRollupId, type FleetDayRollup, type StoredFleetDay } from './fleet-day-rollup.ts';
import { decodeFleetMonth, encodeFleetMonth, fleetMonthId, type FleetMonthRollup, type StoredFleetMonth } from './fleet-month-rollup.ts';

const rollups = (db: Db): Collection<StoredFleetDay> => db.collection<StoredFleetDay>(COLLECTIONS.fleetRollups);
const monthRollups = (db: Db): Collection<StoredFleetMonth> => db.collection<StoredFleetMonth>(COLLECTIONS.fleetRollups);

/**
 * What a reader needs of a day or month: the report's sums, its first day's carry, the idle check's vehicles, the
 * names, what a month is folded from (all but the carry), or everything (verification).
 */
export type FleetPart = 'sums' | 'carry' | 'fleet' | 'names' | 'fold' | 'all';

const DAY_PROJECTIONS: Record<FleetPart, Record<string, 0 | 1>> = {
  sums: { day: 1, units: 1, active: 1, starts: 1, bridges: 1 },
  carry: { day: 1, units: 1, carry: 1 },
  fleet: { day: 1, fleetUnits: 1, fleet: 1 },
  names: { _id: 0, day: 1 },
  fold: { carry: 0 },
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

/** The same, decoded: whole (verification), or what a month is folded from. */
export async function readFleetDays(
  db: Db,
  tenant: string,
  from: string,
  to: string,
  maxTimeMS: number,
  part: 'fold' | 'all' = 'all',
): Promise<FleetDayRollup[]> {
  return (await readStoredFleetDays(db, tenant, from, to, part, maxTimeMS)).map(decodeFleetDay);
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

/** Keeps these days as computed: only those that changed are written, a day without activity is removed. */
export async function writeFleetDays(db: Db, tenant: string, days: readonly string[], kept: readonly FleetDayRollup[], maxTimeMS: number): Promise<void> {
  if (!days.length) return;
  await replaceScoped(rollups(db), tenant, { tenant, day: { $in: [...days] } }, kept.map(encodeFleetDay), maxTimeMS);
}

/**
 * Keeps a month's forms as folded (every client's and each client's): only those that changed are written (a day's
 * change leaves the months of the clients without a trip on it as they were), a client's no longer there removed.
 */
export async function writeFleetMonth(db: Db, tenant: string, month: string, kept: readonly FleetMonthRollup[], maxTimeMS: number): Promise<void> {
  const prefix = fleetMonthId(tenant, month, '');
  await replaceScoped(monthRollups(db), tenant, { _id: { $gte: prefix, $lt: `${prefix}\uffff` }, tenant }, kept.map(encodeFleetMonth), maxTimeMS);
}

/** Forgets a tenant's kept days and months (a rebuild marks every day first). */
export async function deleteFleetRollupsOf(db: Db, tenant: string): Promise<void> {
  await rollups(db).deleteMany({ tenant }, { writeConcern: { j: true } });
}
