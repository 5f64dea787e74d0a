/**
 * How unit economics' days are kept (docs/rollups.md "Unit economics"): a run of consecutive days
 * computed from the trips delivered and the received cost documents issued on them, kept, and
 * compared with what is kept; a month folded from its kept days, and compared with the same
 * folded from its days computed from the documents. The lifecycle around them (marks, drain, rebuild, verify) is
 * unit-economics-rollup-kind.ts.
 */
import type { Db } from 'mongodb';
import { streamReceivedDocDays } from '../received/received-repo.ts';
import { receivedDocDays } from '../received/received-doc-days.ts';
import { streamCostDocs } from '../received/received-assignments-repo.ts';
import { mxDayEnd, mxDayStart } from '../time/mexico-city.ts';
import { sameContent } from '../shared/same-content.ts';
import { COST_CATEGORIES, isCostCategory, plateWordKeys } from './trip-costs.ts';
import { costDocNetC, streamCreditNoteCosts } from './period-costs.ts';
import { rollUpUnitEconomicsDays, type UnitCostDoc, type UnitEconomicsDay } from './unit-economics-day.ts';
import { foldUnitEconomicsMonth } from './unit-economics-month.ts';
import {
  readUnitEconomicsDays,
  readUnitEconomicsMonths,
  unitEconomicsDayNames,
  unitEconomicsMonthNames,
  writeUnitEconomicsDays,
  writeUnitEconomicsMonth,
} from './unit-economics-rollups-repo.ts';
import { streamUnitTrips } from './trip-audits-repo.ts';
import { daysOfMonth } from '../time/calendar-months.ts';

/** The cost documents issued in [start, end] and the credit notes issued then (negative, on their own day, placed as their invoice). */
async function* costDocsOf(db: Db, tenant: string, q: { start: number; end: number }, maxTimeMS: number): AsyncIterable<UnitCostDoc> {
  for await (const d of streamCostDocs(db, tenant, { ...q, categories: COST_CATEGORIES }, maxTimeMS)) {
    if (!isCostCategory(d.category)) continue;
    yield { date: d.date, category: d.category, netC: costDocNetC(d), vehicle: d.vehicle, tripId: d.tripId, keys: plateWordKeys(d.descriptions) };
  }
  for await (const n of streamCreditNoteCosts(db, tenant, { ...q, categories: COST_CATEGORIES }, maxTimeMS)) {
    if (!isCostCategory(n.category)) continue;
    yield { date: n.date, category: n.category, netC: n.netC, vehicle: n.vehicle, tripId: n.tripId, keys: plateWordKeys(n.descriptions) };
  }
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** A run of consecutive days' kept form computed from the documents (in memory, nothing written). */
export async function computeUnitEconomicsDays(db: Db, tenant: string, run: readonly string[], maxTimeMS: number): Promise<UnitEconomicsDay[]> {
  if (!run.length) return [];
  const q = { start: mxDayStart(run[0] as string), end: mxDayEnd(run[run.length - 1] as string) };
  const [legs, costs] = await Promise.all([collect(streamUnitTrips(db, tenant, q, maxTimeMS)), collect(costDocsOf(db, tenant, q, maxTimeMS))]);
  return rollUpUnitEconomicsDays(tenant, run, legs, costs);
}

/** Recomputes a run of days of a tenant from its documents and keeps them (idempotent). */
export async function recomputeUnitEconomicsDays(db: Db, tenant: string, run: readonly string[], maxTimeMS: number): Promise<void> {
  await writeUnitEconomicsDays(db, tenant, run, await computeUnitEconomicsDays(db, tenant, run, maxTimeMS));
}

/** The days of a run whose kept form differs from the documents'. */
export async function differingUnitEconomicsDays(db: Db, tenant: string, run: readonly string[], maxTimeMS: number): Promise<string[]> {
  const keptBy = new Map((await readUnitEconomicsDays(db, tenant, run[0] as string, run[run.length - 1] as string, maxTimeMS)).map((k) => [k.day, k]));
  const computedBy = new Map((await computeUnitEconomicsDays(db, tenant, run, maxTimeMS)).map((k) => [k.day, k]));
  return run.filter((day) => {
    const a = keptBy.get(day);
    const b = computedBy.get(day);
    return !a || !b ? a !== b : !sameContent(a, b);
  });
}

/** The days a tenant's kept form holds. */
export async function keptUnitEconomicsDays(db: Db, tenant: string, maxTimeMS: number): Promise<string[]> {
  return unitEconomicsDayNames(db, tenant, maxTimeMS);
}

/**
 * Every day a tenant's received CFDIs touch: their issue days and their settlements' (a credit note's
 * negative cost is kept on its own day; a payment's day holds nothing of them and is kept as none).
 */
export async function receivedCostDays(db: Db, tenant: string): Promise<Set<string>> {
  const days = new Set<string>();
  for await (const d of streamReceivedDocDays(db, tenant)) for (const day of receivedDocDays(d)) days.add(day);
  return days;
}

/** Folds a month of a tenant from its kept days and keeps it (idempotent; a month without days is removed). */
export async function recomputeUnitEconomicsMonth(db: Db, tenant: string, month: string, maxTimeMS: number): Promise<void> {
  const days = daysOfMonth(month);
  const kept = await readUnitEconomicsDays(db, tenant, days[0] as string, days[days.length - 1] as string, maxTimeMS);
  await writeUnitEconomicsMonth(db, tenant, month, foldUnitEconomicsMonth(tenant, month, kept));
}

/** Whether a kept month differs from the same folded from its days computed from the documents. */
export async function unitEconomicsMonthDiffers(db: Db, tenant: string, month: string, maxTimeMS: number): Promise<boolean> {
  const [kept] = await readUnitEconomicsMonths(db, tenant, [month], maxTimeMS);
  const computed = foldUnitEconomicsMonth(tenant, month, await computeUnitEconomicsDays(db, tenant, daysOfMonth(month), maxTimeMS));
  return !kept || !computed ? kept !== computed : !sameContent(kept, computed);
}

/** The months a tenant's kept form holds. */
export async function keptUnitEconomicsMonths(db: Db, tenant: string, maxTimeMS: number): Promise<string[]> {
  return unitEconomicsMonthNames(db, tenant, maxTimeMS);
}
