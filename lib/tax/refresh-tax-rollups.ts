/**
 * Keeping the tax summary's days (docs/rollups.md): recompute marked days from the documents,
 * bring a period up to date before a summary reads it, drain marks in the background, rebuild
 * a whole store, and verify kept days against the documents.
 */
import type { Db } from 'mongodb';
import { clearMarks, countMarks, markDays, markedDays, someMarks, type RollupMark } from '../db/rollup-marks.ts';
import { financialDocs } from '../db/collections.ts';
import { FINANCIAL_DOCS_SOURCE, financialDocDays } from '../finance/financial-doc-days.ts';
import { tenantsWithDocuments } from '../finance/financial-docs-repo.ts';
import { getTracedSettings } from '../settings/settings-source.ts';
import { mxAddDays, mxDateString, mxDayEnd, mxDayStart, mxMonthRange } from '../time/mexico-city.ts';
import { sameContent } from '../shared/same-content.ts';
import type { FinancialDocument } from '../model/financial-document.ts';
import type { ReconcileSettings } from './reconcile.ts';
import { streamTaxDocs } from './tax-repo.ts';
import { normalizeTaxDoc } from './normalize-tax-doc.ts';
import {
  rollUpTaxDay,
  rollUpTaxMonth,
  taxRollupFingerprint,
  TAX_ROLLUP_VERSION,
  type IndexedFinding,
  type RollupBasis,
  type TaxDayRollup,
} from './tax-day-rollup.ts';
import { deleteTaxRollupsOf, readTaxDays, readTaxFindingsOfDays, writeTaxDays } from './tax-rollups-repo.ts';
import { deleteRollupState, readRollupState, writeRollupState } from '../db/rollup-state.ts';

/** The rollupState entry of these totals. */
export const TAX_ROLLUP_STATE = 'taxRollups';

/** Marks of payment-basis months ('YYYY-MM') whose days changed: set when a day is recomputed. */
export const TAX_MONTHS_SOURCE = 'taxMonths';

/** The order a day's (month's) documents are rolled up in: date, then id (the client-name rule reads it). */
const byDateThenId = (a: FinancialDocument, b: FinancialDocument): number => a.date - b.date || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Marks read per pass: a period has at most 366 days, so one pass brings any period up to date. */
const MARKS_PER_PASS = 400;

/** Days recomputed at once: a month of a large tenant's documents in memory, not a year. */
const MAX_RUN_DAYS = 31;

/** Runs of consecutive days (sorted, deduplicated, at most MAX_RUN_DAYS each): one query per run. */
function runsOf(days: Iterable<string>): string[][] {
  const sorted = [...new Set(days)].sort();
  const runs: string[][] = [];
  for (const d of sorted) {
    const run = runs[runs.length - 1];
    if (run && run.length < MAX_RUN_DAYS && mxAddDays(run[run.length - 1] as string, 1) === d) run.push(d);
    else runs.push([d]);
  }
  return runs;
}

/** The days' totals and findings computed from the documents emitted on them (in memory, nothing written). */
export async function computeTaxDays(
  db: Db,
  tenant: string,
  days: readonly string[],
  settings: ReconcileSettings,
  maxTimeMS: number,
): Promise<{ kept: TaxDayRollup[]; findings: IndexedFinding[] }> {
  const kept: TaxDayRollup[] = [];
  const findings: IndexedFinding[] = [];
  for (const run of runsOf(days)) {
    const byDay = new Map<string, FinancialDocument[]>();
    const cursor = streamTaxDocs(
      db,
      tenant,
      { basis: 'invoice', start: mxDayStart(run[0] as string), end: mxDayEnd(run[run.length - 1] as string) },
      maxTimeMS,
    );
    for await (const raw of cursor) {
      const day = mxDateString(raw.date);
      let list = byDay.get(day);
      if (!list) byDay.set(day, (list = []));
      list.push(normalizeTaxDoc(raw));
    }
    for (const [day, docs] of [...byDay.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      // Document order must not matter: by date then id, as the findings are listed.
      docs.sort(byDateThenId);
      const r = rollUpTaxDay(tenant, day, docs, settings);
      kept.push(r.rollup);
      findings.push(...r.findings);
    }
  }
  return { kept, findings };
}

/** The payment-basis months of a tenant computed from the documents that count in them (in memory, nothing written). */
export async function computeTaxMonths(
  db: Db,
  tenant: string,
  months: readonly string[],
  settings: ReconcileSettings,
  maxTimeMS: number,
): Promise<{ kept: TaxDayRollup[]; findings: IndexedFinding[] }> {
  const kept: TaxDayRollup[] = [];
  const findings: IndexedFinding[] = [];
  for (const month of [...new Set(months)].sort()) {
    const range = mxMonthRange(month);
    const docs: FinancialDocument[] = [];
    for await (const raw of streamTaxDocs(db, tenant, { basis: 'payment', start: range.start, end: range.endExclusive - 1 }, maxTimeMS))
      docs.push(normalizeTaxDoc(raw));
    docs.sort(byDateThenId);
    const r = rollUpTaxMonth(tenant, month, docs, settings);
    if (r.rollup.rows.length) kept.push(r.rollup);
    findings.push(...r.findings);
  }
  return { kept, findings };
}

/** Recomputes these days (invoice basis) of a tenant from its documents and keeps them. */
export async function recomputeTaxDays(db: Db, tenant: string, days: readonly string[], settings: ReconcileSettings, maxTimeMS: number): Promise<void> {
  for (const run of runsOf(days)) {
    const { kept, findings } = await computeTaxDays(db, tenant, run, settings, maxTimeMS);
    await writeTaxDays(db, tenant, 'invoice', run, kept, findings);
  }
}

/** Recomputes these payment-basis months of a tenant from its documents and keeps them. */
export async function recomputeTaxMonths(db: Db, tenant: string, months: readonly string[], settings: ReconcileSettings, maxTimeMS: number): Promise<void> {
  for (const month of [...new Set(months)].sort()) {
    const { kept, findings } = await computeTaxMonths(db, tenant, [month], settings, maxTimeMS);
    await writeTaxDays(db, tenant, 'payment', [month], kept, findings);
  }
}

/**
 * Recomputes the days these marks stand for and marks their months for the payment basis
 * (TAX_MONTHS_SOURCE), then clears the day marks no write has bumped since. A crash in
 * between leaves the day marks, so the months are marked again.
 */
async function settleDayMarks(db: Db, tenant: string, marks: readonly RollupMark[], settings: ReconcileSettings, maxTimeMS: number): Promise<void> {
  if (!marks.length) return;
  const days = marks.map((m) => m.day);
  await recomputeTaxDays(db, tenant, days, settings, maxTimeMS);
  await markDays(
    db,
    tenant,
    TAX_MONTHS_SOURCE,
    days.map((d) => d.slice(0, 7)),
  );
  await clearMarks(db, marks);
}

/** Recomputes the months these marks stand for, then clears the marks no day has bumped since. */
async function settleMonthMarks(db: Db, tenant: string, marks: readonly RollupMark[], settings: ReconcileSettings, maxTimeMS: number): Promise<void> {
  if (!marks.length) return;
  await recomputeTaxMonths(
    db,
    tenant,
    marks.map((m) => m.day),
    settings,
    maxTimeMS,
  );
  await clearMarks(db, marks);
}

/**
 * A tenant's kept days in [fromDay, toDay], brought up to date first: days marked by a write
 * and days kept under other settings (or an older version) are recomputed from the documents.
 */
export async function readFreshTaxDays(
  db: Db,
  tenant: string,
  settings: ReconcileSettings,
  fromDay: string,
  toDay: string,
  maxTimeMS: number,
): Promise<TaxDayRollup[]> {
  if (toDay < fromDay) return [];
  await settleDayMarks(db, tenant, await markedDays(db, tenant, FINANCIAL_DOCS_SOURCE, fromDay, toDay, MARKS_PER_PASS), settings, maxTimeMS);
  const kept = await readTaxDays(db, tenant, 'invoice', fromDay, toDay, maxTimeMS);
  const fingerprint = taxRollupFingerprint(settings);
  const stale = kept.filter((k) => k.fingerprint !== fingerprint).map((k) => k.day);
  if (!stale.length) return kept;
  await recomputeTaxDays(db, tenant, stale, settings, maxTimeMS);
  return readTaxDays(db, tenant, 'invoice', fromDay, toDay, maxTimeMS);
}

/**
 * A tenant's payment-basis month, brought up to date first: its days' marks settled (which
 * marks the month), then the month recomputed if marked or kept under other settings. Null
 * when nothing counts in it.
 */
export async function readFreshTaxMonth(db: Db, tenant: string, settings: ReconcileSettings, month: string, maxTimeMS: number): Promise<TaxDayRollup | null> {
  const range = mxMonthRange(month);
  const first = mxDateString(range.start);
  const last = mxDateString(range.endExclusive - 1);
  await settleDayMarks(db, tenant, await markedDays(db, tenant, FINANCIAL_DOCS_SOURCE, first, last, MARKS_PER_PASS), settings, maxTimeMS);
  await settleMonthMarks(db, tenant, await markedDays(db, tenant, TAX_MONTHS_SOURCE, month, month, 1), settings, maxTimeMS);
  const [kept] = await readTaxDays(db, tenant, 'payment', month, month, maxTimeMS);
  if (!kept || kept.fingerprint === taxRollupFingerprint(settings)) return kept ?? null;
  await recomputeTaxMonths(db, tenant, [month], settings, maxTimeMS);
  return (await readTaxDays(db, tenant, 'payment', month, month, maxTimeMS))[0] ?? null;
}

/** Whether this store's days were built by this version (else summaries read the documents). */
export async function taxRollupsReady(db: Db): Promise<boolean> {
  return (await readRollupState(db, TAX_ROLLUP_STATE))?.version === TAX_ROLLUP_VERSION;
}

/**
 * One pass of the background drain: recomputes the days of up to `limit` marks, any tenant.
 * Answers how many marks it worked on (0: nothing to do).
 */
export async function drainTaxMarks(db: Db, limit: number, maxTimeMS: number): Promise<number> {
  let worked = 0;
  for (const [source, settle] of [
    [FINANCIAL_DOCS_SOURCE, settleDayMarks],
    [TAX_MONTHS_SOURCE, settleMonthMarks],
  ] as const) {
    const marks = await someMarks(db, source, limit);
    const byTenant = new Map<string, RollupMark[]>();
    for (const m of marks) {
      let list = byTenant.get(m.tenant);
      if (!list) byTenant.set(m.tenant, (list = []));
      list.push(m);
    }
    for (const [tenant, list] of byTenant) {
      const { settings } = await getTracedSettings(db, tenant);
      await settle(db, tenant, list, settings, maxTimeMS);
    }
    worked += marks.length;
  }
  return worked;
}

/** Settles every marked day of a tenant, then every marked month (the days mark them). */
async function settleAll(
  db: Db,
  tenant: string,
  settings: ReconcileSettings,
  maxTimeMS: number,
  opts: { onDays?: (n: number) => void; stopped?: () => boolean; perPass?: number } = {},
): Promise<void> {
  const perPass = opts.perPass ?? MARKS_PER_PASS;
  for (;;) {
    if (opts.stopped?.()) return;
    const marks = await markedDays(db, tenant, FINANCIAL_DOCS_SOURCE, '0000-00-00', '9999-99-99', perPass);
    if (!marks.length) break;
    await settleDayMarks(db, tenant, marks, settings, maxTimeMS);
    opts.onDays?.(marks.length);
  }
  for (;;) {
    if (opts.stopped?.()) return;
    const marks = await markedDays(db, tenant, TAX_MONTHS_SOURCE, '0000-00', '9999-99', perPass);
    if (!marks.length) break;
    await settleMonthMarks(db, tenant, marks, settings, maxTimeMS);
  }
}

export interface RebuildProgress {
  tenant: string;
  phase: 'marking' | 'computing';
  done: number;
  total: number;
}

/** Marks every day a tenant's documents touch (a store, or documents, written without marks). */
export async function markAllTaxDays(db: Db, tenant: string): Promise<number> {
  const days = new Set<string>();
  const cursor = financialDocs(db).find({ company: tenant }, { projection: { _id: 0, date: 1, 'payments.date': 1 }, batchSize: 5000 });
  for await (const d of cursor) for (const day of financialDocDays(d)) days.add(day);
  for (const run of runsOf(days)) await markDays(db, tenant, FINANCIAL_DOCS_SOURCE, run);
  return days.size;
}

/**
 * Rebuilds the kept days of these tenants (default: every tenant with documents): marks every
 * day their documents touch, then recomputes them, reporting progress. Days are marked before
 * anything is computed, so a summary read meanwhile recomputes what it needs. Then records
 * that the store holds this version.
 */
export async function rebuildTaxRollups(
  db: Db,
  opts: { tenants?: readonly string[]; maxTimeMS?: number; onProgress?: (p: RebuildProgress) => void; stopped?: () => boolean } = {},
): Promise<{ tenants: number; days: number; stopped: boolean }> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  const all = await tenantsWithDocuments(db);
  const tenants = opts.tenants ?? all;
  let days = 0;
  for (const tenant of tenants) {
    const total = await markAllTaxDays(db, tenant);
    // Every day marked: what was kept (perhaps by another version) goes, and a summary meanwhile recomputes what it reads.
    await deleteTaxRollupsOf(db, tenant);
    opts.onProgress?.({ tenant, phase: 'marking', done: total, total });
    const { settings } = await getTracedSettings(db, tenant);
    let done = 0;
    // A month of days per pass: a worker asked to stop (the service shutting down) stops within one; the marks stay for the next start.
    await settleAll(db, tenant, settings, maxTimeMS, {
      perPass: opts.stopped ? 31 : MARKS_PER_PASS,
      ...(opts.stopped ? { stopped: opts.stopped } : {}),
      onDays: (n) => {
        done += n;
        opts.onProgress?.({ tenant, phase: 'computing', done: Math.min(done, total), total });
      },
    });
    if (opts.stopped?.()) return { tenants: tenants.length, days, stopped: true };
    days += total;
  }
  // Every tenant with documents rebuilt: the store holds this version.
  if (all.every((t) => tenants.includes(t))) await writeRollupState(db, TAX_ROLLUP_STATE, TAX_ROLLUP_VERSION);
  return { tenants: tenants.length, days, stopped: false };
}

/** Records the store as not built: summaries reconcile the documents until the rollup worker has rebuilt it. */
export async function forgetTaxRollups(db: Db): Promise<void> {
  await deleteRollupState(db, TAX_ROLLUP_STATE);
}

/** A fresh store needs no rebuild: it is recorded as built, so every write from now on keeps the days. */
export async function markEmptyStoreBuilt(db: Db): Promise<boolean> {
  if (await readRollupState(db, TAX_ROLLUP_STATE)) return false;
  if (await financialDocs(db).findOne({}, { projection: { _id: 1 } })) return false;
  await writeRollupState(db, TAX_ROLLUP_STATE, TAX_ROLLUP_VERSION);
  return true;
}

export interface VerifyResult {
  tenant: string;
  days: number;
  mismatched: string[];
}

/**
 * Compares a tenant's kept days with the same days computed from the documents (every day
 * either side holds). Answers the days that differ; `repair` rewrites them.
 */
export async function verifyTaxRollups(db: Db, tenant: string, opts: { repair?: boolean; maxTimeMS?: number } = {}): Promise<VerifyResult> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  const { settings } = await getTracedSettings(db, tenant);
  // Marked days and months are known to be stale: settled first, so a difference is a fault, not a pending write.
  await settleAll(db, tenant, settings, maxTimeMS);
  const docDays = new Set<string>();
  const cursor = financialDocs(db).find({ company: tenant }, { projection: { _id: 0, date: 1, 'payments.date': 1 }, batchSize: 5000 });
  for await (const d of cursor) for (const day of financialDocDays(d)) docDays.add(day);
  const mismatched: string[] = [];
  const compare = async (basis: RollupBasis, keys: readonly string[], compute: typeof computeTaxDays): Promise<void> => {
    const { kept, findings } = await compute(db, tenant, keys, settings, maxTimeMS);
    const computedBy = new Map(kept.map((k) => [k.day, k]));
    const stored = await readTaxDays(db, tenant, basis, keys[0] as string, keys[keys.length - 1] as string, maxTimeMS);
    const storedBy = new Map(stored.map((k) => [k.day, k]));
    const storedFindings = await readTaxFindingsOfDays(db, tenant, basis, keys, maxTimeMS);
    for (const key of keys) {
      const fa = storedFindings.filter((f) => f.day === key).sort((x, y) => (x._id < y._id ? -1 : 1));
      const fb = findings.filter((f) => f.day === key).sort((x, y) => (x._id < y._id ? -1 : 1));
      if (!sameRollup(storedBy.get(key), computedBy.get(key)) || !sameContent(fa, fb)) mismatched.push(key);
    }
  };
  const keptDays = await readTaxDays(db, tenant, 'invoice', '0000-00-00', '9999-99-99', maxTimeMS);
  const days = [...new Set([...docDays, ...keptDays.map((k) => k.day)])].sort();
  for (const run of runsOf(days)) await compare('invoice', run, computeTaxDays);
  const keptMonths = await readTaxDays(db, tenant, 'payment', '0000-00', '9999-99', maxTimeMS);
  const months = [...new Set([...[...docDays].map((d) => d.slice(0, 7)), ...keptMonths.map((k) => k.day)])].sort();
  for (const month of months) await compare('payment', [month], computeTaxMonths);
  if (opts.repair && mismatched.length) {
    await recomputeTaxDays(
      db,
      tenant,
      mismatched.filter((k) => k.length === 10),
      settings,
      maxTimeMS,
    );
    await recomputeTaxMonths(
      db,
      tenant,
      mismatched.filter((k) => k.length === 7),
      settings,
      maxTimeMS,
    );
  }
  return { tenant, days: days.length + months.length, mismatched };
}

function sameRollup(a: TaxDayRollup | undefined, b: TaxDayRollup | undefined): boolean {
  if (!a || !b) return a === b;
  return a.fingerprint === b.fingerprint && a.month === b.month && sameContent(a.rows, b.rows);
}

/** Outstanding marks (progress of the drain). */
export const outstandingTaxMarks = (db: Db): Promise<number> => countMarks(db, FINANCIAL_DOCS_SOURCE);
