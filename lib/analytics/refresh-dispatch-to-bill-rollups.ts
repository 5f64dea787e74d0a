/**
 * How dispatch-to-bill's days are kept (docs/rollups.md "Dispatch-to-bill"): a run of
 * consecutive days computed from the trips with a leg unloaded on them (and their linked
 * invoices), kept, and compared with what is kept; and how an invoice write reaches the days of
 * the trips it bills. The lifecycle around them is dispatch-to-bill-rollup-kind.ts.
 *
 * Its mark source is `tripsDispatchToBill`: a trip write marks the days its legs touch (stored and
 * new versions), and a financial-document write the same days of the trips linked to the
 * documents (lib/trips/linked-trip-days.ts). So a cancellation, a re-import that moves an
 * invoice's date, or an invoice that arrives after the trip naming it reaches the trip's days.
 * `dispatchToBillDocs` is what an older version marked instead (the days of written documents):
 * such a mark left in an upgraded store is settled by reading the documents dated on its day and
 * marking the unload days of every trip linked to one (`idFinan`), then cleared (seq-guarded).
 */
import type { Db } from 'mongodb';
import { isDeepStrictEqual } from 'node:util';
import { clearMarks, countMarks, markDays, markedDays, someMarks, type DrainWindow, type RollupMark } from '../db/rollup-marks.ts';
import { settleByTenant, throwIfTenantsFailed } from '../db/settle-by-tenant.ts';
import { LEGACY_DISPATCH_TO_BILL_DOCS_SOURCE } from '../finance/financial-doc-days.ts';
import { DISPATCH_TO_BILL_TRIPS_SOURCE } from '../trips/trip-days.ts';
import { mxAddDays, mxDayEnd, mxDayStart } from '../time/mexico-city.ts';
import { rollUpDispatchToBillDays, type DispatchToBillDayPart, type StoredDeliveryRow, type UnbilledEntry } from './dispatch-to-bill-day.ts';
import {
  documentIdsDated,
  readDispatchToBillDays,
  readUnbilledIn,
  unloadDaysOfTripsLinkedTo,
  writeDispatchToBillDays,
  writeUnbilledEntries,
} from './dispatch-to-bill-rollups-repo.ts';
import { streamStoredDeliveryRows } from './trip-audits-repo.ts';
import { groupBy } from '../shared/group-by.ts';

const rangeOf = (run: readonly string[]): { start: number; end: number } => ({
  start: mxDayStart(run[0] as string),
  end: mxDayEnd(run[run.length - 1] as string),
});

/** A run of days (consecutive, or across gaps in a rebuild) computed from the trips with a leg unloaded on them (nothing written). */
async function computeRun(
  db: Db,
  tenant: string,
  run: readonly string[],
  maxTimeMS: number,
): Promise<{ parts: DispatchToBillDayPart[]; unbilled: UnbilledEntry[] }> {
  const rows: StoredDeliveryRow[] = [];
  for await (const r of streamStoredDeliveryRows(db, tenant, rangeOf(run), maxTimeMS)) rows.push(r);
  return rollUpDispatchToBillDays(tenant, run, rows);
}

/** Recomputes a run of days of a tenant and keeps them, those days only (idempotent). */
export async function recomputeDispatchToBillRun(db: Db, tenant: string, run: readonly string[], maxTimeMS: number): Promise<void> {
  const { parts, unbilled } = await computeRun(db, tenant, run, maxTimeMS);
  await writeDispatchToBillDays(db, tenant, run, parts);
  await writeUnbilledEntries(db, tenant, run, unbilled, maxTimeMS);
}

const byDay = <T extends { day: string }>(xs: readonly T[]): Map<string, T[]> => groupBy(xs, (x) => x.day);

const byTrip = (a: UnbilledEntry, b: UnbilledEntry): number => (a.tripId < b.tripId ? -1 : a.tripId > b.tripId ? 1 : 0);

/** The days of a run whose kept parts or unbilled entries differ from the trips'. */
export async function differingDispatchToBillDays(db: Db, tenant: string, run: readonly string[], maxTimeMS: number): Promise<string[]> {
  const keptParts = byDay(await readDispatchToBillDays(db, tenant, run[0] as string, run[run.length - 1] as string, maxTimeMS));
  const keptUnbilled = byDay(await readUnbilledIn(db, tenant, rangeOf(run), maxTimeMS));
  const computed = await computeRun(db, tenant, run, maxTimeMS);
  const parts = byDay(computed.parts);
  const unbilled = byDay(computed.unbilled);
  return run.filter(
    (day) =>
      !isDeepStrictEqual(keptParts.get(day) ?? [], parts.get(day) ?? []) ||
      !isDeepStrictEqual([...(keptUnbilled.get(day) ?? [])].sort(byTrip), [...(unbilled.get(day) ?? [])].sort(byTrip)),
  );
}

/** Consecutive days, at most 31 per read of the documents. */
function runsOf(dayList: Iterable<string>): string[][] {
  const runs: string[][] = [];
  for (const d of [...new Set(dayList)].sort()) {
    const run = runs[runs.length - 1];
    if (run && run.length < 31 && mxAddDays(run[run.length - 1] as string, 1) === d) run.push(d);
    else runs.push([d]);
  }
  return runs;
}

/** Turns document marks into trip marks of the days of the trips linked to the documents dated on their days; clears them. */
async function settleDocumentMarks(db: Db, tenant: string, marks: readonly RollupMark[], maxTimeMS: number): Promise<void> {
  if (!marks.length) return;
  const tripDays = new Set<string>();
  for (const run of runsOf(marks.map((m) => m.day))) {
    const ids = await documentIdsDated(db, tenant, run[0] as string, run[run.length - 1] as string, maxTimeMS);
    for (const d of await unloadDaysOfTripsLinkedTo(db, tenant, ids, maxTimeMS)) tripDays.add(d);
  }
  // Marked before the document marks are cleared: a crash in between leaves the document marks to do it again.
  await markDays(db, tenant, DISPATCH_TO_BILL_TRIPS_SOURCE, tripDays);
  await clearMarks(db, marks);
}

/** Document marks read per pass. */
const DOCUMENT_MARKS_PER_PASS = 400;

/**
 * Turns a tenant's document marks (any day: an invoice of any date bills a trip of any period)
 * into trip marks, in at most `maxPasses` passes (`Infinity`: all). Answers how many it settled.
 */
export async function settleDocumentMarksOf(db: Db, tenant: string, maxPasses: number, maxTimeMS: number): Promise<number> {
  let settled = 0;
  for (let pass = 0; pass < maxPasses; pass++) {
    const marks = await markedDays(db, tenant, LEGACY_DISPATCH_TO_BILL_DOCS_SOURCE, '0000-00-00', '9999-99-99', DOCUMENT_MARKS_PER_PASS);
    await settleDocumentMarks(db, tenant, marks, maxTimeMS);
    settled += marks.length;
    if (marks.length < DOCUMENT_MARKS_PER_PASS) break;
  }
  return settled;
}

/** The drain's pass over document marks of any tenant, at most `limit`. */
export async function drainDocumentMarks(db: Db, limit: number, maxTimeMS: number, window?: DrainWindow): Promise<number> {
  const marks = await someMarks(db, LEGACY_DISPATCH_TO_BILL_DOCS_SOURCE, limit, window);
  throwIfTenantsFailed(await settleByTenant(marks, (tenant, list) => settleDocumentMarks(db, tenant, list, maxTimeMS)));
  return marks.length;
}

export const outstandingDocumentMarks = (db: Db): Promise<number> => countMarks(db, LEGACY_DISPATCH_TO_BILL_DOCS_SOURCE);
