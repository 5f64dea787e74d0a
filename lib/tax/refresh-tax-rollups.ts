/**
 * Keeping the tax summary's days (docs/rollups.md): recompute marked days from the documents,
 * bring a period up to date before a summary reads it, drain marks in the background, rebuild
 * a whole store, and verify kept days against the documents.
 */
import type { Db } from 'mongodb';
import { clearMarks, countMarks, markDays, markedDays, someMarks, type RollupMark } from '../db/rollup-marks.ts';
import { financialDocs } from '../db/collections.ts';
import { FINANCIAL_DOCS_SOURCE, financialDocDays } from '../finance/financial-doc-days.ts';
import { getTracedSettings } from '../settings/settings-source.ts';
import { mxAddDays, mxDateString, mxDayEnd, mxDayStart } from '../time/mexico-city.ts';
import { sameContent } from '../shared/same-content.ts';
import type { FinancialDocument } from '../model/financial-document.ts';
import type { ReconcileSettings } from './reconcile.ts';
import { streamTaxDocs } from './tax-repo.ts';
import { normalizeTaxDoc } from './normalize-tax-doc.ts';
import { rollUpTaxDay, taxRollupFingerprint, TAX_ROLLUP_VERSION, type IndexedFinding, type TaxDayRollup } from './tax-day-rollup.ts';
import { readRollupState, readTaxDays, readTaxFindingsOfDays, writeRollupState, writeTaxDays } from './tax-rollups-repo.ts';

/** The rollupState entry of these totals. */
export const TAX_ROLLUP_STATE = 'taxRollups';

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
      docs.sort((a, b) => a.date - b.date || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const r = rollUpTaxDay(tenant, day, docs, settings);
      kept.push(r.rollup);
      findings.push(...r.findings);
    }
  }
  return { kept, findings };
}

/** Recomputes these days of a tenant from its documents and keeps them. */
export async function recomputeTaxDays(db: Db, tenant: string, days: readonly string[], settings: ReconcileSettings, maxTimeMS: number): Promise<void> {
  for (const run of runsOf(days)) {
    const { kept, findings } = await computeTaxDays(db, tenant, run, settings, maxTimeMS);
    await writeTaxDays(db, tenant, run, kept, findings);
  }
}

/** Recomputes the days these marks stand for, then clears the marks no write has bumped since. */
async function settleMarks(db: Db, tenant: string, marks: readonly RollupMark[], settings: ReconcileSettings, maxTimeMS: number): Promise<void> {
  if (!marks.length) return;
  await recomputeTaxDays(
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
  await settleMarks(db, tenant, await markedDays(db, tenant, FINANCIAL_DOCS_SOURCE, fromDay, toDay, MARKS_PER_PASS), settings, maxTimeMS);
  const kept = await readTaxDays(db, tenant, fromDay, toDay, maxTimeMS);
  const fingerprint = taxRollupFingerprint(settings);
  const stale = kept.filter((k) => k.fingerprint !== fingerprint).map((k) => k.day);
  if (!stale.length) return kept;
  await recomputeTaxDays(db, tenant, stale, settings, maxTimeMS);
  return readTaxDays(db, tenant, fromDay, toDay, maxTimeMS);
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
  const marks = await someMarks(db, FINANCIAL_DOCS_SOURCE, limit);
  const byTenant = new Map<string, RollupMark[]>();
  for (const m of marks) {
    let list = byTenant.get(m.tenant);
    if (!list) byTenant.set(m.tenant, (list = []));
    list.push(m);
  }
  for (const [tenant, list] of byTenant) {
    const { settings } = await getTracedSettings(db, tenant);
    await settleMarks(db, tenant, list, settings, maxTimeMS);
  }
  return marks.length;
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
  opts: { tenants?: readonly string[]; maxTimeMS?: number; onProgress?: (p: RebuildProgress) => void } = {},
): Promise<{ tenants: number; days: number }> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  const all = await financialDocs(db).distinct('company');
  const tenants = opts.tenants ?? all;
  let days = 0;
  for (const tenant of tenants) {
    const total = await markAllTaxDays(db, tenant);
    opts.onProgress?.({ tenant, phase: 'marking', done: total, total });
    const { settings } = await getTracedSettings(db, tenant);
    let done = 0;
    for (;;) {
      const marks = await markedDays(db, tenant, FINANCIAL_DOCS_SOURCE, '0000-00-00', '9999-99-99', MARKS_PER_PASS);
      if (!marks.length) break;
      await settleMarks(db, tenant, marks, settings, maxTimeMS);
      done += marks.length;
      opts.onProgress?.({ tenant, phase: 'computing', done: Math.min(done, total), total });
    }
    days += total;
  }
  // Every tenant with documents rebuilt: the store holds this version.
  if (all.every((t) => tenants.includes(t))) await writeRollupState(db, TAX_ROLLUP_STATE, TAX_ROLLUP_VERSION);
  return { tenants: tenants.length, days };
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
  const docDays = new Set<string>();
  const cursor = financialDocs(db).find({ company: tenant }, { projection: { _id: 0, date: 1 }, batchSize: 5000 });
  for await (const d of cursor) docDays.add(mxDateString(d.date));
  const keptAll = await readTaxDays(db, tenant, '0000-00-00', '9999-99-99', maxTimeMS);
  const all = [...new Set([...docDays, ...keptAll.map((k) => k.day)])].sort();
  const keptBy = new Map(keptAll.map((k) => [k.day, k]));
  const mismatched: string[] = [];
  for (const run of runsOf(all)) {
    const { kept, findings } = await computeTaxDays(db, tenant, run, settings, maxTimeMS);
    const computedBy = new Map(kept.map((k) => [k.day, k]));
    const storedFindings = await readTaxFindingsOfDays(db, tenant, run, maxTimeMS);
    for (const day of run) {
      const a = keptBy.get(day);
      const b = computedBy.get(day);
      const fa = storedFindings.filter((f) => f.day === day).sort((x, y) => (x._id < y._id ? -1 : 1));
      const fb = findings.filter((f) => f.day === day).sort((x, y) => (x._id < y._id ? -1 : 1));
      if (!sameRollup(a, b) || !sameContent(fa, fb)) mismatched.push(day);
    }
  }
  if (opts.repair && mismatched.length) await recomputeTaxDays(db, tenant, mismatched, settings, maxTimeMS);
  return { tenant, days: all.length, mismatched };
}

function sameRollup(a: TaxDayRollup | undefined, b: TaxDayRollup | undefined): boolean {
  if (!a || !b) return a === b;
  return a.fingerprint === b.fingerprint && a.month === b.month && sameContent(a.rows, b.rows);
}

/** Outstanding marks (progress of the drain). */
export const outstandingTaxMarks = (db: Db): Promise<number> => countMarks(db, FINANCIAL_DOCS_SOURCE);
