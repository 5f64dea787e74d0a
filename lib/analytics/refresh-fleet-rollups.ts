/**
 * How fleet utilization's days are kept (docs/rollups.md "Fleet utilization"): a run of
 * consecutive days computed from the trips that touch them, kept, and compared with what is
 * kept. The lifecycle around them (marks, drain, rebuild, verify) is fleet-utilization-rollup-kind.ts.
 */
import type { Db } from 'mongodb';
import { sameContent } from '../shared/same-content.ts';
import { rollUpFleetDays, type FleetDayRollup } from './fleet-day-rollup.ts';
import { readFleetDays, readStoredFleetDays, writeFleetDays } from './fleet-rollups-repo.ts';
import { tripsTouchingDays } from './trip-audits-repo.ts';

/** A run of consecutive days' kept form computed from the trips that touch them (in memory, nothing written). */
export async function computeFleetDays(db: Db, tenant: string, run: readonly string[], maxTimeMS: number): Promise<FleetDayRollup[]> {
  const touching = await tripsTouchingDays(db, tenant, { fromDay: run[0] as string, toDay: run[run.length - 1] as string }, maxTimeMS);
  return rollUpFleetDays(tenant, run, touching);
}

/** Recomputes a run of days of a tenant from its trips and keeps them. */
export async function recomputeFleetDays(db: Db, tenant: string, run: readonly string[], maxTimeMS: number): Promise<void> {
  await writeFleetDays(db, tenant, run, await computeFleetDays(db, tenant, run, maxTimeMS));
}

/** The days of a run whose kept form differs from the trips'. */
export async function differingFleetDays(db: Db, tenant: string, run: readonly string[], maxTimeMS: number): Promise<string[]> {
  const keptBy = new Map((await readFleetDays(db, tenant, run[0] as string, run[run.length - 1] as string, 'all', maxTimeMS)).map((k) => [k.day, k]));
  const computedBy = new Map((await computeFleetDays(db, tenant, run, maxTimeMS)).map((k) => [k.day, k]));
  return run.filter((day) => {
    const a = keptBy.get(day);
    const b = computedBy.get(day);
    return !a || !b ? a !== b : !sameContent(a, b);
  });
}

/** The days a tenant's kept form holds. */
export async function keptFleetDays(db: Db, tenant: string, maxTimeMS: number): Promise<string[]> {
  return (await readStoredFleetDays(db, tenant, '0000-00-00', '9999-99-99', 'fleet', maxTimeMS)).map((k) => k.day);
}
