/**
 * How fleet utilization's days and months are kept (docs/rollups.md "Fleet utilization"): a run
 * of consecutive days computed from the trips that touch them, a month folded from its kept
 * days, each kept and compared with what is kept. The lifecycle around them (marks, drain,
 * rebuild, verify) is fleet-utilization-rollup-kind.ts.
 */
import type { Db } from 'mongodb';
import { sameContent } from '../shared/same-content.ts';
import { daysOfMonth } from '../time/calendar-months.ts';
import { rollUpFleetDays, type FleetDayRollup } from './fleet-day-rollup.ts';
import { foldFleetMonth } from './fleet-month-rollup.ts';
import { fleetMonthNames, readFleetDays, readFleetMonth, readStoredFleetDays, writeFleetDays, writeFleetMonth } from './fleet-rollups-repo.ts';
import { tripsTouchingDays } from './trip-audits-repo.ts';

/** A run of consecutive days' kept form computed from the trips that touch them (in memory, nothing written). */
export async function computeFleetDays(db: Db, tenant: string, run: readonly string[], maxTimeMS: number): Promise<FleetDayRollup[]> {
  const touching = await tripsTouchingDays(db, tenant, { fromDay: run[0] as string, toDay: run[run.length - 1] as string }, maxTimeMS);
  return rollUpFleetDays(tenant, run, touching);
}

/** Recomputes a run of days of a tenant from its trips and keeps them. */
export async function recomputeFleetDays(db: Db, tenant: string, run: readonly string[], maxTimeMS: number): Promise<void> {
  await writeFleetDays(db, tenant, run, await computeFleetDays(db, tenant, run, maxTimeMS), maxTimeMS);
}

/** The days of a run whose kept form differs from the trips'. */
export async function differingFleetDays(db: Db, tenant: string, run: readonly string[], maxTimeMS: number): Promise<string[]> {
  const keptBy = new Map((await readFleetDays(db, tenant, run[0] as string, run[run.length - 1] as string, maxTimeMS)).map((k) => [k.day, k]));
  const computedBy = new Map((await computeFleetDays(db, tenant, run, maxTimeMS)).map((k) => [k.day, k]));
  return run.filter((day) => {
    const a = keptBy.get(day);
    const b = computedBy.get(day);
    return !a || !b ? a !== b : !sameContent(a, b);
  });
}

/** The days a tenant's kept form holds. */
export async function keptFleetDays(db: Db, tenant: string, maxTimeMS: number): Promise<string[]> {
  return (await readStoredFleetDays(db, tenant, '0000-00-00', '9999-99-99', 'names', maxTimeMS)).map((k) => k.day);
}

/** Folds a month of a tenant from its kept days and keeps it (idempotent; a month without days is removed). */
export async function recomputeFleetMonth(db: Db, tenant: string, month: string, maxTimeMS: number): Promise<void> {
  const days = daysOfMonth(month);
  const kept = await readFleetDays(db, tenant, days[0] as string, days[days.length - 1] as string, maxTimeMS, 'fold');
  await writeFleetMonth(db, tenant, month, foldFleetMonth(tenant, month, kept), maxTimeMS);
}

/** Whether a kept month differs from the same folded from its days computed from the trips. */
export async function fleetMonthDiffers(db: Db, tenant: string, month: string, maxTimeMS: number): Promise<boolean> {
  const kept = await readFleetMonth(db, tenant, month, maxTimeMS);
  const computed = foldFleetMonth(tenant, month, await computeFleetDays(db, tenant, daysOfMonth(month), maxTimeMS));
  return !sameContent(kept, computed);
}

/** The months a tenant's kept form holds. */
export const keptFleetMonths = fleetMonthNames;
