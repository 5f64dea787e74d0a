/**
 * How the tax summary's days and months are kept (docs/rollups.md): a run of days (invoice
 * basis) or a month (payment basis) computed from the documents, kept, and compared with what
 * is kept. The lifecycle around them (marks, drain, rebuild, verify) is tax-summary-rollup-kind.ts.
 */
import type { Db } from 'mongodb';
import { mxDateString, mxDayEnd, mxDayStart, mxMonthRange } from '../time/mexico-city.ts';
import { sameContent } from '../shared/same-content.ts';
import type { FinancialDocument } from '../model/financial-document.ts';
import type { ReconcileSettings } from './reconcile.ts';
import { inPaymentBasisPeriod, streamTaxDocs } from './tax-repo.ts';
import { normalizeTaxDoc } from './normalize-tax-doc.ts';
import { rollUpTaxDay, rollUpTaxMonth, type IndexedFinding, type RollupBasis, type TaxDayRollup } from './tax-day-rollup.ts';
import { readTaxDays, readTaxFindingsOfDays, writeTaxDays } from './tax-rollups-repo.ts';

/** The order a day's (month's) documents are rolled up in: date, then id (the client-name rule reads it). */
const byDateThenId = (a: FinancialDocument, b: FinancialDocument): number => a.date - b.date || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * A run of days' totals and findings computed from the documents emitted on them (in memory,
 * nothing written). The run's days only, each from its own day's documents: a rebuild's run may
 * skip days (rebuildAcrossGaps), and a document of a skipped day written meanwhile is its mark's.
 */
export async function computeTaxDays(
  db: Db,
  tenant: string,
  run: readonly string[],
  settings: ReconcileSettings,
  maxTimeMS: number,
): Promise<{ kept: TaxDayRollup[]; findings: IndexedFinding[] }> {
  const kept: TaxDayRollup[] = [];
  const findings: IndexedFinding[] = [];
  const byDay = new Map<string, FinancialDocument[]>();
  const inRun = new Set(run);
  const cursor = streamTaxDocs(db, tenant, { basis: 'invoice', start: mxDayStart(run[0] as string), end: mxDayEnd(run[run.length - 1] as string) }, maxTimeMS);
  for await (const raw of cursor) {
    const day = mxDateString(raw.date);
    if (!inRun.has(day)) continue;
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
  return { kept, findings };
}

/**
 * Payment-basis months of a tenant (sorted, any gaps) computed from the documents that count in
 * each (in memory, nothing written): one read for all, split as each month's own read selects.
 */
export async function computeTaxMonths(
  db: Db,
  tenant: string,
  months: readonly string[],
  settings: ReconcileSettings,
  maxTimeMS: number,
): Promise<{ kept: TaxDayRollup[]; findings: IndexedFinding[] }> {
  const kept: TaxDayRollup[] = [];
  const findings: IndexedFinding[] = [];
  if (!months.length) return { kept, findings };
  const ranges = months.map((month) => ({ month, ...mxMonthRange(month), docs: [] as FinancialDocument[] }));
  const first = ranges[0] as (typeof ranges)[number];
  const last = ranges[ranges.length - 1] as (typeof ranges)[number];
  for await (const raw of streamTaxDocs(db, tenant, { basis: 'payment', start: first.start, end: last.endExclusive - 1 }, maxTimeMS)) {
    const hits = ranges.filter((r) => inPaymentBasisPeriod(raw, r.start, r.endExclusive - 1));
    if (!hits.length) continue;
    const doc = normalizeTaxDoc(raw);
    for (const r of hits) r.docs.push(doc);
  }
  for (const r of ranges) {
    r.docs.sort(byDateThenId);
    const m = rollUpTaxMonth(tenant, r.month, r.docs, settings);
    if (m.rollup.rows.length) kept.push(m.rollup);
    findings.push(...m.findings);
  }
  return { kept, findings };
}

/** Recomputes a run of days (invoice basis) of a tenant from its documents and keeps them. */
export async function recomputeTaxDays(db: Db, tenant: string, run: readonly string[], settings: ReconcileSettings, maxTimeMS: number): Promise<void> {
  const { kept, findings } = await computeTaxDays(db, tenant, run, settings, maxTimeMS);
  await writeTaxDays(db, tenant, 'invoice', run, kept, findings, maxTimeMS);
}

/** Recomputes payment-basis months of a tenant (sorted, any gaps) from their documents and keeps them: one read, one write of each collection. */
export async function recomputeTaxMonths(db: Db, tenant: string, months: readonly string[], settings: ReconcileSettings, maxTimeMS: number): Promise<void> {
  const { kept, findings } = await computeTaxMonths(db, tenant, months, settings, maxTimeMS);
  await writeTaxDays(db, tenant, 'payment', months, kept, findings, maxTimeMS);
}

function sameRollup(a: TaxDayRollup | undefined, b: TaxDayRollup | undefined): boolean {
  if (!a || !b) return a === b;
  return a.fingerprint === b.fingerprint && a.month === b.month && sameContent(a.rows, b.rows);
}

/** The keys (days of a run, or one month) whose kept totals or findings differ from the same computed from the documents. */
async function differing(
  db: Db,
  tenant: string,
  basis: RollupBasis,
  keys: readonly string[],
  computed: { kept: TaxDayRollup[]; findings: IndexedFinding[] },
  maxTimeMS: number,
): Promise<string[]> {
  const computedBy = new Map(computed.kept.map((k) => [k.day, k]));
  const stored = await readTaxDays(db, tenant, basis, keys[0] as string, keys[keys.length - 1] as string, maxTimeMS);
  const storedBy = new Map(stored.map((k) => [k.day, k]));
  const storedFindings = await readTaxFindingsOfDays(db, tenant, basis, keys, maxTimeMS);
  return keys.filter((key) => {
    const fa = storedFindings.filter((f) => f.day === key).sort((x, y) => (x._id < y._id ? -1 : 1));
    const fb = computed.findings.filter((f) => f.day === key).sort((x, y) => (x._id < y._id ? -1 : 1));
    return !sameRollup(storedBy.get(key), computedBy.get(key)) || !sameContent(fa, fb);
  });
}

/** The days of a run whose kept totals or findings differ from the documents'. */
export async function differingTaxDays(db: Db, tenant: string, run: readonly string[], settings: ReconcileSettings, maxTimeMS: number): Promise<string[]> {
  return differing(db, tenant, 'invoice', run, await computeTaxDays(db, tenant, run, settings, maxTimeMS), maxTimeMS);
}

/** The payment-basis months (sorted, any gaps) whose kept totals or findings differ from the documents'. */
export async function differingTaxMonths(db: Db, tenant: string, months: readonly string[], settings: ReconcileSettings, maxTimeMS: number): Promise<string[]> {
  if (!months.length) return [];
  return differing(db, tenant, 'payment', months, await computeTaxMonths(db, tenant, months, settings, maxTimeMS), maxTimeMS);
}

/** The keys (days, or months) a tenant's kept totals of a basis hold. */
export async function keptTaxKeys(db: Db, tenant: string, basis: RollupBasis, maxTimeMS: number): Promise<string[]> {
  return (await readTaxDays(db, tenant, basis, '0000-00', '9999-99-99', maxTimeMS)).map((k) => k.day);
}
