/**
 * Keeping the tax position's months (docs/rollups.md, "Tax position and DIOT"): a month is
 * recomputed from its documents when a day of it is marked — by a write of a financial document
 * (TAX_POSITION_DOCS_SOURCE, lib/finance/financial-doc-days.ts) or of a received CFDI
 * (TAX_POSITION_RECEIVED_SOURCE, lib/received/received-doc-days.ts) — then the marks it saw are
 * cleared (seq-guarded). A report settles the marks of its months first; the rollup worker drains
 * the rest; a rebuild marks every month a tenant's documents touch; verify compares.
 */
import type { Db } from 'mongodb';
import { clearMarks, countMarks, markDays, markedDays, someMarks, type RollupMark } from '../db/rollup-marks.ts';
import { financialDocs } from '../db/collections.ts';
import { financialDocDays, TAX_POSITION_DOCS_SOURCE } from '../finance/financial-doc-days.ts';
import { tenantsWithDocuments } from '../finance/financial-docs-repo.ts';
import { receivedDocDays, TAX_POSITION_RECEIVED_SOURCE } from '../received/received-doc-days.ts';
import { receivedDocs, streamReceivedDocDays, tenantsWithReceivedDocs } from '../received/received-repo.ts';
import { sameContent } from '../shared/same-content.ts';
import { mxDateString, mxMonthRange } from '../time/mexico-city.ts';
import { deleteRollupState, readRollupState, writeRollupState } from '../db/rollup-state.ts';
import { monthRange, ownMonthRows } from './tax-position-month.ts';
import { rollUpTaxPositionMonth, TAX_POSITION_ROLLUP_VERSION, type KeptMonth, type TaxPositionMonthRollup } from './tax-position-rollup.ts';
import {
  deleteTaxPositionOf,
  readAllTaxPositionMonths,
  readTaxPositionMonthLines,
  readTaxPositionMonths,
  writeTaxPositionMonth,
} from './tax-position-rollups-repo.ts';

/** The rollupState entry of these totals. */
export const TAX_POSITION_STATE = 'taxPosition';

/** The sources whose marked days move a month of the tax position. */
const SOURCES = [TAX_POSITION_DOCS_SOURCE, TAX_POSITION_RECEIVED_SOURCE] as const;

/** Marks read per source and pass: a report reads at most two months (62 days). */
const MARKS_PER_PASS = 400;

const monthOf = (day: string): string => day.slice(0, 7);
const firstDay = (month: string): string => mxDateString(mxMonthRange(month).start);
const lastDay = (month: string): string => mxDateString(mxMonthRange(month).endExclusive - 1);

/** One month of a tenant computed from its documents (in memory, nothing written). */
export async function computeTaxPositionMonth(db: Db, tenant: string, month: string, maxTimeMS: number): Promise<KeptMonth> {
  const { collections, payments } = await ownMonthRows(db, tenant, monthRange(month), maxTimeMS);
  return rollUpTaxPositionMonth(tenant, month, collections, payments);
}

/** Recomputes these months of a tenant from its documents and keeps them. */
export async function recomputeTaxPositionMonths(db: Db, tenant: string, months: Iterable<string>, maxTimeMS: number): Promise<void> {
  for (const month of [...new Set(months)].sort())
    await writeTaxPositionMonth(db, tenant, month, await computeTaxPositionMonth(db, tenant, month, maxTimeMS), maxTimeMS);
}

/** Recomputes the months these marks (any of the two sources) stand for, then clears the marks no write has bumped since. */
async function settleMarks(db: Db, tenant: string, marks: readonly RollupMark[], maxTimeMS: number): Promise<void> {
  if (!marks.length) return;
  await recomputeTaxPositionMonths(
    db,
    tenant,
    marks.map((m) => monthOf(m.day)),
    maxTimeMS,
  );
  await clearMarks(db, marks);
}

/** The marks of both sources on the days of these months. */
async function marksOfMonths(db: Db, tenant: string, months: readonly string[]): Promise<RollupMark[]> {
  const sorted = [...new Set(months)].sort();
  if (!sorted.length) return [];
  const wanted = new Set(sorted);
  const found: RollupMark[] = [];
  for (const source of SOURCES)
    found.push(...(await markedDays(db, tenant, source, firstDay(sorted[0] as string), lastDay(sorted[sorted.length - 1] as string), MARKS_PER_PASS)));
  return found.filter((m) => wanted.has(monthOf(m.day)));
}

/**
 * These kept months of a tenant (at most a few: a report's month and the one before), brought
 * up to date first: months marked by a write and months kept by another version are recomputed.
 * A month absent from the answer holds nothing.
 */
export async function readFreshTaxPositionMonths(
  db: Db,
  tenant: string,
  months: readonly string[],
  maxTimeMS: number,
): Promise<Map<string, TaxPositionMonthRollup>> {
  await settleMarks(db, tenant, await marksOfMonths(db, tenant, months), maxTimeMS);
  let kept = await readTaxPositionMonths(db, tenant, months, maxTimeMS);
  const stale = kept.filter((k) => k.version !== TAX_POSITION_ROLLUP_VERSION).map((k) => k.month);
  if (stale.length) {
    await recomputeTaxPositionMonths(db, tenant, stale, maxTimeMS);
    kept = await readTaxPositionMonths(db, tenant, months, maxTimeMS);
  }
  return new Map(kept.map((k) => [k.month, k]));
}

/** Whether this store's months were built by this version (else the reports read the documents). */
export async function taxPositionReady(db: Db): Promise<boolean> {
  return (await readRollupState(db, TAX_POSITION_STATE))?.version === TAX_POSITION_ROLLUP_VERSION;
}

/** One pass of the background drain: recomputes the months of up to `limit` marks (of both sources together), any tenant. */
export async function drainTaxPositionMarks(db: Db, limit: number, maxTimeMS: number): Promise<number> {
  let worked = 0;
  for (const source of SOURCES) {
    if (worked >= limit) break;
    const marks = await someMarks(db, source, limit - worked);
    const byTenant = new Map<string, RollupMark[]>();
    for (const m of marks) byTenant.set(m.tenant, [...(byTenant.get(m.tenant) ?? []), m]);
    for (const [tenant, list] of byTenant) await settleMarks(db, tenant, list, maxTimeMS);
    worked += marks.length;
  }
  return worked;
}

/** Settles every marked month of a tenant, the earliest first, one month per pass (a rebuild told to stop stops within one). */
async function settleAll(db: Db, tenant: string, maxTimeMS: number, opts: { onMonth?: () => void; stopped?: () => boolean } = {}): Promise<void> {
  for (;;) {
    if (opts.stopped?.()) return;
    const first: string[] = [];
    for (const source of SOURCES) {
      const [m] = await markedDays(db, tenant, source, '0000-00-00', '9999-99-99', 1);
      if (m) first.push(monthOf(m.day));
    }
    if (!first.length) return;
    const month = first.sort()[0] as string;
    await settleMarks(db, tenant, await marksOfMonths(db, tenant, [month]), maxTimeMS);
    opts.onMonth?.();
  }
}

/** The months a tenant's documents touch: the days of its financial documents and of its received CFDIs. */
async function documentMonths(db: Db, tenant: string): Promise<{ issued: Set<string>; received: Set<string> }> {
  const issued = new Set<string>();
  const cursor = financialDocs(db).find({ company: tenant }, { projection: { _id: 0, date: 1, 'payments.date': 1 }, batchSize: 5000 });
  for await (const d of cursor) for (const day of financialDocDays(d)) issued.add(monthOf(day));
  const received = new Set<string>();
  for await (const d of streamReceivedDocDays(db, tenant)) for (const day of receivedDocDays(d)) received.add(monthOf(day));
  return { issued, received };
}

export interface TaxPositionRebuildProgress {
  tenant: string;
  phase: 'marking' | 'computing';
  done: number;
  total: number;
}

/** Every tenant with financial documents or received CFDIs. */
async function tenantsOfStore(db: Db): Promise<string[]> {
  return [...new Set([...(await tenantsWithDocuments(db)), ...(await tenantsWithReceivedDocs(db))])].sort();
}

/**
 * Rebuilds the kept months of these tenants (default: every tenant with documents): marks the
 * first day of every month their documents touch (a month is what is recomputed), forgets what
 * was kept, then recomputes the marked months, reporting progress. A report read meanwhile
 * recomputes the months it needs. Then records that the store holds this version.
 */
export async function rebuildTaxPosition(
  db: Db,
  opts: { tenants?: readonly string[]; maxTimeMS?: number; onProgress?: (p: TaxPositionRebuildProgress) => void; stopped?: () => boolean } = {},
): Promise<{ tenants: number; months: number; stopped: boolean }> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  const all = await tenantsOfStore(db);
  const tenants = opts.tenants ?? all;
  let months = 0;
  for (const tenant of tenants) {
    const { issued, received } = await documentMonths(db, tenant);
    await markDays(db, tenant, TAX_POSITION_DOCS_SOURCE, [...issued].map(firstDay));
    await markDays(db, tenant, TAX_POSITION_RECEIVED_SOURCE, [...received].map(firstDay));
    const total = new Set([...issued, ...received]).size;
    await deleteTaxPositionOf(db, tenant);
    opts.onProgress?.({ tenant, phase: 'marking', done: total, total });
    let done = 0;
    await settleAll(db, tenant, maxTimeMS, {
      ...(opts.stopped ? { stopped: opts.stopped } : {}),
      onMonth: () => opts.onProgress?.({ tenant, phase: 'computing', done: Math.min(++done, total), total }),
    });
    if (opts.stopped?.()) return { tenants: tenants.length, months, stopped: true };
    months += total;
  }
  if (all.every((t) => tenants.includes(t))) await writeRollupState(db, TAX_POSITION_STATE, TAX_POSITION_ROLLUP_VERSION);
  return { tenants: tenants.length, months, stopped: false };
}

/** Records the store as not built: the reports read the documents until the rollup worker has rebuilt it. */
export async function forgetTaxPosition(db: Db): Promise<void> {
  await deleteRollupState(db, TAX_POSITION_STATE);
}

/** A fresh store needs no rebuild: recorded as built, so every write from now on keeps the months. */
export async function markEmptyTaxPositionBuilt(db: Db): Promise<boolean> {
  if (await readRollupState(db, TAX_POSITION_STATE)) return false;
  if (await financialDocs(db).findOne({}, { projection: { _id: 1 } })) return false;
  if (await receivedDocs(db).findOne({}, { projection: { _id: 1 } })) return false;
  await writeRollupState(db, TAX_POSITION_STATE, TAX_POSITION_ROLLUP_VERSION);
  return true;
}

/** Outstanding marks of both sources (the drain's health). */
export async function outstandingTaxPositionMarks(db: Db): Promise<number> {
  let n = 0;
  for (const source of SOURCES) n += await countMarks(db, source);
  return n;
}

const byId = <T extends { _id: string }>(xs: readonly T[]): T[] => [...xs].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));

/**
 * Compares a tenant's kept months (figures, lines, DIOT rows) with the same months computed
 * from the documents (every month either side holds), after settling the marked ones. Answers
 * the months that differ; `repair` rewrites them.
 */
export async function verifyTaxPosition(
  db: Db,
  tenant: string,
  opts: { repair?: boolean; maxTimeMS?: number } = {},
): Promise<{ months: number; mismatched: string[] }> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  // Marked months are known to be stale: settled first, so a difference is a fault, not a pending write.
  await settleAll(db, tenant, maxTimeMS);
  const { issued, received } = await documentMonths(db, tenant);
  const kept = new Map((await readAllTaxPositionMonths(db, tenant, maxTimeMS)).map((k) => [k.month, k]));
  const months = [...new Set([...issued, ...received, ...kept.keys()])].sort();
  const mismatched: string[] = [];
  for (const month of months) {
    const computed = await computeTaxPositionMonth(db, tenant, month, maxTimeMS);
    const stored = kept.get(month) ?? null;
    const same =
      (stored === null || computed.month === null ? stored === computed.month : sameContent(stored, computed.month)) &&
      sameContent(byId(await readTaxPositionMonthLines(db, tenant, month, maxTimeMS)), byId(computed.entries));
    if (!same) mismatched.push(month);
  }
  if (opts.repair && mismatched.length) await recomputeTaxPositionMonths(db, tenant, mismatched, maxTimeMS);
  return { months: months.length, mismatched };
}
