/**
 * Keeping the discounts and shrinkage audit's days (docs/rollups.md "Discounts and shrinkage"):
 * recompute marked days from the documents and trips, bring a report's days up to date before it
 * reads them, drain marks in the background, rebuild a whole store, verify kept days.
 *
 * Two mark sources: every financial-document write marks its days under DISCOUNT_DAYS_SOURCE
 * (the discount days are recomputed), and the days of the trips linked to the documents under
 * SHRINKAGE_TRIPS_SOURCE (lib/trips/linked-trip-days.ts: a linked invoice's cancellation and
 * shortage concepts are what shrinkage counts as recovered); every trip write marks its days
 * under SHRINKAGE_TRIPS_SOURCE. An older version marked document days under
 * LEGACY_DISCOUNTS_SHRINKAGE_DOCS_SOURCE and linked the trips when settling them: such marks left
 * in an upgraded store are settled that way (the discount days, then the delivery days of the
 * trips linked to every document of the day).
 */
import type { Db } from 'mongodb';
import { clearMarks, countMarks, markDays, markedDays, someMarks, type DrainWindow, type RollupMark } from '../db/rollup-marks.ts';
import { settleByTenant, settleTenant, throwIfTenantsFailed } from '../db/settle-by-tenant.ts';
import { deleteRollupState, readRollupState, writeRollupState } from '../db/rollup-state.ts';
import { financialDocs, trips } from '../db/collections.ts';
import { DISCOUNT_DAYS_SOURCE, LEGACY_DISCOUNTS_SHRINKAGE_DOCS_SOURCE } from '../finance/financial-doc-days.ts';
import { financialDocHistoryDays, tenantsWithDocuments } from '../finance/financial-docs-repo.ts';
import { SHRINKAGE_TRIPS_SOURCE } from '../trips/trip-days.ts';
import { tenantsWithTrips } from '../trips/trips-repo.ts';
import { getTenantSettings } from '../settings/settings-repo.ts';
import { mxAddDays, mxDateString, mxDayEnd, mxDayStart } from '../time/mexico-city.ts';
import { sameContent } from '../shared/same-content.ts';
import type { RebuildOptions, RebuildOutcome, VerifyOutcome } from '../rollups/rollup-kind.ts';
import type { TenantSettings } from '../model/tenant-settings.ts';
import { conceptGroupsByDay, documentIdsDated } from './billing-concepts-repo.ts';
import { streamShrinkageRows, streamTripLegs } from './trip-audits-repo.ts';
import { tripOffloadDate } from './dispatch-to-bill.ts';
import { tripHistoryDays } from './trip-history-days.ts';
import { rollUpDiscountDays, type KeptDiscountDay } from './discount-days.ts';
import {
  DISCOUNTS_SHRINKAGE_ROLLUP_VERSION,
  ShrinkageDaysAccumulator,
  shrinkageFingerprint,
  type KeptShrinkageDay,
  type ShrinkageFinding,
} from './shrinkage-days.ts';
import {
  deleteDiscountsShrinkageOf,
  FINDINGS_PER_WRITE,
  keptDayNames,
  putFindings,
  readDiscountDays,
  readFindings,
  readShrinkageDays,
  writeDiscountDays,
  writeShrinkageDays,
} from './discounts-shrinkage-rollups-repo.ts';
import { groupBy } from '../shared/group-by.ts';

/** The rollupState entry of these totals. */
export const DISCOUNTS_SHRINKAGE_ROLLUP_STATE = 'discountsShrinkageRollups';

/** Marks read per pass: a report reads at most 366 days. */
const MARKS_PER_PASS = 400;
/** Days recomputed at once (one read of the documents, one of the trips). */
const MAX_RUN_DAYS = 31;
/**
 * The same in a rebuild and a verify, which read the whole history: fewer, larger reads, as the
 * other kinds' (lib/rollups/marked-rollup-kind.ts). Memory does not grow with a run: the discount
 * groups are folded by the engine, the trips one at a time here, the findings written in batches.
 */
const REBUILD_RUN_DAYS = 92;
/** Linked trips looked up per query. */
const IDS_PER_QUERY = 1000;
const ALL = ['0000-00-00', '9999-99-99'] as const;

type Source = typeof DISCOUNT_DAYS_SOURCE | typeof LEGACY_DISCOUNTS_SHRINKAGE_DOCS_SOURCE | typeof SHRINKAGE_TRIPS_SOURCE;

/**
 * Runs of consecutive days (sorted, deduplicated, at most `maxDays` each): one read per run.
 * `acrossGaps` (a rebuild, a verify): a run may skip days, spanning at most `maxDays` calendar
 * days; each day of a run is computed from its own day's documents or deliveries and only the
 * run's days are written, so a sparse history costs one read per span, not one per stretch.
 */
function runsOf(days: Iterable<string>, maxDays = MAX_RUN_DAYS, acrossGaps = false): string[][] {
  const sorted = [...new Set(days)].sort();
  const runs: string[][] = [];
  for (const d of sorted) {
    const run = runs[runs.length - 1];
    const next = acrossGaps ? d <= mxAddDays(run?.[0] ?? d, maxDays - 1) : mxAddDays(run?.[run.length - 1] ?? d, 1) === d;
    if (run && run.length < maxDays && next) run.push(d);
    else runs.push([d]);
  }
  return runs;
}

/** A settle's runs: across gaps in a rebuild and a verify (`whole`), consecutive days otherwise. */
const runsFor = (days: Iterable<string>, mode: SettleMode): string[][] => (mode.whole ? runsOf(days, REBUILD_RUN_DAYS, true) : runsOf(days, MAX_RUN_DAYS));

/** Marks written per command in a rebuild (any days: a mark is its own upsert). */
const MARKS_PER_WRITE = 1000;

const rangeOf = (run: readonly string[]): { start: number; end: number } => ({
  start: mxDayStart(run[0] as string),
  end: mxDayEnd(run[run.length - 1] as string),
});

/** The delivery day of a trip (the day its last leg was delivered), null while a leg is in transit. */
function deliveryDay(trip: Parameters<typeof tripOffloadDate>[0]): string | null {
  const off = tripOffloadDate(trip);
  return off === null ? null : mxDateString(off);
}

/** The discount days of a run computed from the documents (nothing written). */
async function computeDiscountRun(db: Db, tenant: string, run: readonly string[], maxTimeMS: number): Promise<KeptDiscountDay[]> {
  return rollUpDiscountDays(tenant, await conceptGroupsByDay(db, tenant, rangeOf(run), maxTimeMS));
}

/**
 * The shrinkage days of a run from the trips delivered in it, folded one trip at a time; the
 * findings go to `onFindings` in batches as they come (nothing written here).
 */
async function foldShrinkageRun(
  db: Db,
  tenant: string,
  run: readonly string[],
  settings: TenantSettings,
  maxTimeMS: number,
  onFindings: (found: ShrinkageFinding[]) => Promise<void> | void,
): Promise<KeptShrinkageDay[]> {
  const acc = new ShrinkageDaysAccumulator(tenant, run, settings);
  for await (const row of streamShrinkageRows(db, tenant, rangeOf(run), maxTimeMS)) {
    acc.add(row);
    if (acc.pendingFindings >= FINDINGS_PER_WRITE) await onFindings(acc.takeFindings());
  }
  const rest = acc.takeFindings();
  if (rest.length) await onFindings(rest);
  return acc.days();
}

/** How a settle runs: `whole` in a rebuild, which marked every delivery day itself and settles them after every document day. */
interface SettleMode {
  whole?: boolean;
}

/** The delivery days of the trips linked to these documents (at most IDS_PER_QUERY). */
async function addLinkedDeliveryDays(db: Db, tenant: string, ids: readonly string[], into: Set<string>, maxTimeMS: number): Promise<void> {
  for await (const trip of streamTripLegs(db, tenant, { linkedTo: ids }, maxTimeMS)) {
    const day = deliveryDay(trip);
    if (day !== null) into.add(day);
  }
}

/**
 * Recomputes these discount days; with `linkTrips` (a mark an older version left), also marks the
 * delivery days of the trips linked to their documents. Not in a rebuild: every delivery day is
 * marked already and settled after the document days (a write meanwhile marks its own days).
 */
async function recomputeDocDays(
  db: Db,
  tenant: string,
  days: readonly string[],
  maxTimeMS: number,
  mode: SettleMode & { linkTrips?: boolean } = {},
): Promise<void> {
  for (const run of runsFor(days, mode)) {
    await writeDiscountDays(db, tenant, run, await computeDiscountRun(db, tenant, run, maxTimeMS));
    if (mode.whole || !mode.linkTrips) continue;
    const { start, end } = rangeOf(run);
    const tripDays = new Set<string>();
    let ids: string[] = [];
    for await (const id of documentIdsDated(db, tenant, start, end, maxTimeMS)) {
      ids.push(id);
      if (ids.length < IDS_PER_QUERY) continue;
      await addLinkedDeliveryDays(db, tenant, ids, tripDays, maxTimeMS);
      ids = [];
    }
    if (ids.length) await addLinkedDeliveryDays(db, tenant, ids, tripDays, maxTimeMS);
    await markDays(db, tenant, SHRINKAGE_TRIPS_SOURCE, tripDays);
  }
}

/** Recomputes these shrinkage days (and their findings) under these settings: the findings put as they come, the days last. */
async function recomputeTripDays(
  db: Db,
  tenant: string,
  days: readonly string[],
  settings: TenantSettings,
  maxTimeMS: number,
  mode: SettleMode = {},
): Promise<void> {
  for (const run of runsFor(days, mode)) {
    const ids = new Set<string>();
    const kept = await foldShrinkageRun(db, tenant, run, settings, maxTimeMS, async (found) => {
      for (const f of found) ids.add(f._id);
      await putFindings(db, tenant, found, maxTimeMS);
    });
    await writeShrinkageDays(db, tenant, run, kept, ids);
  }
}

/** Recomputes the days these marks stand for, then clears the marks no write has bumped since. */
async function settleMarks(
  db: Db,
  tenant: string,
  source: Source,
  marks: readonly RollupMark[],
  maxTimeMS: number,
  settings?: TenantSettings,
  mode: SettleMode = {},
): Promise<void> {
  if (!marks.length) return;
  const days = marks.map((m) => m.day);
  if (source === DISCOUNT_DAYS_SOURCE) await recomputeDocDays(db, tenant, days, maxTimeMS, mode);
  else if (source === LEGACY_DISCOUNTS_SHRINKAGE_DOCS_SOURCE) await recomputeDocDays(db, tenant, days, maxTimeMS, { ...mode, linkTrips: true });
  else await recomputeTripDays(db, tenant, days, settings ?? (await getTenantSettings(db, tenant)), maxTimeMS, mode);
  await clearMarks(db, marks);
}

/** Settles a tenant's marks of a source within [from, to], in passes; answers how many. */
async function settleRange(
  db: Db,
  tenant: string,
  source: Source,
  from: string,
  to: string,
  maxTimeMS: number,
  opts: SettleMode & { settings?: TenantSettings; perPass?: number; stopped?: () => boolean; onDays?: (n: number) => void } = {},
): Promise<void> {
  const perPass = opts.perPass ?? MARKS_PER_PASS;
  for (;;) {
    if (opts.stopped?.()) return;
    const marks = await markedDays(db, tenant, source, from, to, perPass);
    await settleMarks(db, tenant, source, marks, maxTimeMS, opts.settings, opts.whole ? { whole: true } : {});
    opts.onDays?.(marks.length);
    if (marks.length < perPass) return;
  }
}

/**
 * A tenant's kept days in [fromDay, toDay], brought up to date first: every marked document day
 * (a document of any date may be linked to a trip delivered in the period), then the period's
 * marked delivery days; a delivery day kept under other settings is recomputed under these.
 */
export async function readFreshDiscountsShrinkage(
  db: Db,
  tenant: string,
  fromDay: string,
  toDay: string,
  settings: TenantSettings,
  maxTimeMS: number,
): Promise<{ discountDays: KeptDiscountDay[]; shrinkageDays: KeptShrinkageDay[] }> {
  if (toDay < fromDay) return { discountDays: [], shrinkageDays: [] };
  await settleRange(db, tenant, LEGACY_DISCOUNTS_SHRINKAGE_DOCS_SOURCE, ...ALL, maxTimeMS);
  await settleRange(db, tenant, DISCOUNT_DAYS_SOURCE, fromDay, toDay, maxTimeMS);
  await settleRange(db, tenant, SHRINKAGE_TRIPS_SOURCE, fromDay, toDay, maxTimeMS, { settings });
  const [discountDays, kept] = await Promise.all([
    readDiscountDays(db, tenant, fromDay, toDay, maxTimeMS),
    readShrinkageDays(db, tenant, fromDay, toDay, maxTimeMS),
  ]);
  const fingerprint = shrinkageFingerprint(settings);
  const stale = kept.filter((d) => d.fingerprint !== fingerprint).map((d) => d.day);
  if (!stale.length) return { discountDays, shrinkageDays: kept };
  await recomputeTripDays(db, tenant, stale, settings, maxTimeMS);
  return { discountDays, shrinkageDays: await readShrinkageDays(db, tenant, fromDay, toDay, maxTimeMS) };
}

/** Whether this store's days were built by this version (else the report reads the documents). */
export async function discountsShrinkageRollupsReady(db: Db): Promise<boolean> {
  return (await readRollupState(db, DISCOUNTS_SHRINKAGE_ROLLUP_STATE))?.version === DISCOUNTS_SHRINKAGE_ROLLUP_VERSION;
}

/** One pass of the background drain: the document days first (an older version's mark delivery days), then delivery days; any tenant. */
export async function drainDiscountsShrinkageMarks(db: Db, limit: number, maxTimeMS: number, window?: DrainWindow): Promise<number> {
  let n = 0;
  const failures = new Map<string, unknown>();
  for (const source of [LEGACY_DISCOUNTS_SHRINKAGE_DOCS_SOURCE, DISCOUNT_DAYS_SOURCE, SHRINKAGE_TRIPS_SOURCE] as const) {
    const marks = await someMarks(db, source, limit, window);
    await settleByTenant(marks, (tenant, list) => settleMarks(db, tenant, source, list, maxTimeMS), failures);
    n += marks.length;
  }
  throwIfTenantsFailed(failures);
  return n;
}

/** Every day a tenant's documents are dated on: a read a rebuild of every kind shares. */
async function daysOfDocuments(db: Db, tenant: string): Promise<ReadonlySet<string>> {
  return (await financialDocHistoryDays(db, tenant)).dated;
}

/** Every day a tenant's trips were delivered on: a read a rebuild of every kind shares. */
async function deliveryDaysOfTrips(db: Db, tenant: string): Promise<ReadonlySet<string>> {
  return (await tripHistoryDays(db, tenant)).delivered;
}

/** Settles every marked day of a tenant: the document days first (an older version's mark delivery days). */
async function settleAll(
  db: Db,
  tenant: string,
  maxTimeMS: number,
  opts: SettleMode & { perPass?: number; stopped?: () => boolean; onDays?: (n: number) => void } = {},
): Promise<void> {
  await settleRange(db, tenant, LEGACY_DISCOUNTS_SHRINKAGE_DOCS_SOURCE, ...ALL, maxTimeMS, opts);
  await settleRange(db, tenant, DISCOUNT_DAYS_SOURCE, ...ALL, maxTimeMS, opts);
  await settleRange(db, tenant, SHRINKAGE_TRIPS_SOURCE, ...ALL, maxTimeMS, opts);
}

/**
 * Rebuilds the kept days of these tenants (default: every tenant with documents or trips): marks
 * every document day and delivery day, forgets what was kept, then recomputes, reporting
 * progress; then records the version.
 */
export async function rebuildDiscountsShrinkageRollups(db: Db, opts: RebuildOptions = {}): Promise<RebuildOutcome> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  const all = [...new Set([...(await tenantsWithDocuments(db)), ...(await tenantsWithTrips(db))])];
  const tenants = opts.tenants ?? all;
  let units = 0;
  const failures = new Map<string, unknown>();
  for (const tenant of tenants) {
    const docDays = await daysOfDocuments(db, tenant);
    const tripDays = await deliveryDaysOfTrips(db, tenant);
    for (const [source, list] of [
      [DISCOUNT_DAYS_SOURCE, [...docDays].sort()],
      [SHRINKAGE_TRIPS_SOURCE, [...tripDays].sort()],
    ] as const)
      for (let i = 0; i < list.length; i += MARKS_PER_WRITE) await markDays(db, tenant, source, list.slice(i, i + MARKS_PER_WRITE));
    // Every day marked: what was kept (perhaps by another version) goes, REBUILD_RUN_DAYS days at a time; a report meanwhile recomputes what it reads.
    const days = [...new Set([...docDays, ...tripDays])].sort();
    const spans: [string, string][] = [];
    for (let i = 0; i < days.length; i += REBUILD_RUN_DAYS) spans.push([days[i] as string, days[Math.min(i + REBUILD_RUN_DAYS, days.length) - 1] as string]);
    await deleteDiscountsShrinkageOf(db, tenant, spans);
    const total = docDays.size + tripDays.size;
    opts.onProgress?.({ kind: 'discounts-shrinkage', tenant, phase: 'marking', done: total, total });
    let done = 0;
    // Runs of REBUILD_RUN_DAYS; one run per pass when the rebuild may be told to stop (it stops within one).
    // A tenant whose recompute fails keeps its marks and the rebuild goes on (lib/rollups/marked-rollup-kind.ts, rebuild).
    await settleTenant(
      tenant,
      () =>
        settleAll(db, tenant, maxTimeMS, {
          whole: true,
          perPass: opts.stopped ? REBUILD_RUN_DAYS : Math.max(MARKS_PER_PASS, REBUILD_RUN_DAYS),
          ...(opts.stopped ? { stopped: opts.stopped } : {}),
          onDays: (n) => {
            done += n;
            opts.onProgress?.({ kind: 'discounts-shrinkage', tenant, phase: 'computing', done: Math.min(done, total), total });
          },
        }),
      failures,
    );
    if (opts.stopped?.()) return { tenants: tenants.length, units, stopped: true };
    units += total;
  }
  if (all.every((t) => tenants.includes(t))) await writeRollupState(db, DISCOUNTS_SHRINKAGE_ROLLUP_STATE, DISCOUNTS_SHRINKAGE_ROLLUP_VERSION);
  throwIfTenantsFailed(failures);
  return { tenants: tenants.length, units, stopped: false };
}

/** Records the store as not built: the report reads the documents until the rollup worker has rebuilt it. */
export async function forgetDiscountsShrinkageRollups(db: Db): Promise<void> {
  await deleteRollupState(db, DISCOUNTS_SHRINKAGE_ROLLUP_STATE);
}

/** A store without documents or trips needs no rebuild: recorded as built. */
export async function markEmptyDiscountsShrinkageStoreBuilt(db: Db): Promise<boolean> {
  if (await readRollupState(db, DISCOUNTS_SHRINKAGE_ROLLUP_STATE)) return false;
  if (await financialDocs(db).findOne({}, { projection: { _id: 1 } })) return false;
  if (await trips(db).findOne({}, { projection: { _id: 1 } })) return false;
  await writeRollupState(db, DISCOUNTS_SHRINKAGE_ROLLUP_STATE, DISCOUNTS_SHRINKAGE_ROLLUP_VERSION);
  return true;
}

const byId = (xs: readonly ShrinkageFinding[] = []): ShrinkageFinding[] => [...xs].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));

const findingsByDay = (xs: readonly ShrinkageFinding[]): Map<string, ShrinkageFinding[]> => groupBy(xs, (f) => f.day);

/**
 * Compares a tenant's kept days (and findings) with the same days computed from the documents
 * and trips, under the tenant's settings (a day kept under other settings is recomputed first,
 * as a report would), a run of REBUILD_RUN_DAYS at a time: the kept and computed forms of one
 * run are held, never the history's. Answers `discounts|day` / `shrinkage|day` keys that differ;
 * `repair` rewrites them.
 */
export async function verifyDiscountsShrinkageRollups(db: Db, tenant: string, opts: { repair?: boolean; maxTimeMS?: number } = {}): Promise<VerifyOutcome> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  // Marked days are known to be stale: settled first, so a difference is a fault, not a pending write.
  await settleAll(db, tenant, maxTimeMS);
  const settings = await getTenantSettings(db, tenant);
  const mismatched: string[] = [];
  const names = await keptDayNames(db, tenant, maxTimeMS);

  const discountDaysAll = [...new Set([...(await daysOfDocuments(db, tenant)), ...names.discount])];
  const badDiscount: string[] = [];
  for (const run of runsOf(discountDaysAll, REBUILD_RUN_DAYS, true)) {
    const kept = new Map((await readDiscountDays(db, tenant, run[0] as string, run[run.length - 1] as string, maxTimeMS)).map((k) => [k.day, k]));
    const computed = new Map((await computeDiscountRun(db, tenant, run, maxTimeMS)).map((k) => [k.day, k]));
    for (const day of run) {
      const a = kept.get(day);
      const b = computed.get(day);
      if (!a || !b ? a !== b : !sameContent(a, b)) badDiscount.push(day);
    }
  }

  const fingerprint = shrinkageFingerprint(settings);
  const stale = names.shrinkage.filter((d) => d.fingerprint !== fingerprint).map((d) => d.day);
  await recomputeTripDays(db, tenant, stale, settings, maxTimeMS, { whole: true });
  const shrinkageDaysAll = [...new Set([...(await deliveryDaysOfTrips(db, tenant)), ...names.shrinkage.map((d) => d.day), ...names.findings])];
  const badShrinkage: string[] = [];
  for (const run of runsOf(shrinkageDaysAll, REBUILD_RUN_DAYS, true)) {
    const [from, to] = [run[0] as string, run[run.length - 1] as string];
    const keptDays = new Map((await readShrinkageDays(db, tenant, from, to, maxTimeMS)).map((k) => [k.day, k]));
    const keptFindings = findingsByDay(await readFindings(db, tenant, from, to, undefined, maxTimeMS));
    const computedFindings: ShrinkageFinding[] = [];
    const computedDays = await foldShrinkageRun(db, tenant, run, settings, maxTimeMS, (found) => {
      computedFindings.push(...found);
    });
    const days = new Map(computedDays.map((k) => [k.day, k]));
    const found = findingsByDay(computedFindings);
    for (const day of run) {
      const a = keptDays.get(day);
      const b = days.get(day);
      const sameDay = !a || !b ? a === b : sameContent(a, b);
      if (!sameDay || !sameContent(byId(keptFindings.get(day)), byId(found.get(day)))) badShrinkage.push(day);
    }
  }

  if (opts.repair) {
    for (const run of runsOf(badDiscount)) await writeDiscountDays(db, tenant, run, await computeDiscountRun(db, tenant, run, maxTimeMS));
    await recomputeTripDays(db, tenant, badShrinkage, settings, maxTimeMS);
  }
  mismatched.push(...badDiscount.map((d) => `discounts|${d}`), ...badShrinkage.map((d) => `shrinkage|${d}`));
  return { checked: discountDaysAll.length + shrinkageDaysAll.length, mismatched };
}

/** Outstanding marks of both sources (progress of the drain). */
export const outstandingDiscountsShrinkageMarks = async (db: Db): Promise<number> =>
  (await countMarks(db, LEGACY_DISCOUNTS_SHRINKAGE_DOCS_SOURCE)) +
  (await countMarks(db, DISCOUNT_DAYS_SOURCE)) +
  (await countMarks(db, SHRINKAGE_TRIPS_SOURCE));
