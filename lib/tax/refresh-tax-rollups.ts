/**
 * How the tax summary's days and months are kept (docs/rollups.md): a run of days computed from
 * the documents (the invoice-basis days and the days' shares of payment-basis months), a
 * payment-basis month added up from its days' shares, each kept and compared with what is kept. The lifecycle around them (marks, drain, rebuild, verify) is tax-summary-rollup-kind.ts.
 */
import type { Db } from 'mongodb';
import { markDays } from '../db/rollup-marks.ts';
import { mxDateString, mxDayEnd, mxDayStart, mxMonthRange } from '../time/mexico-city.ts';
import { groupBy } from '../shared/group-by.ts';
import { sameContent } from '../shared/same-content.ts';
import type { FinancialDocument } from '../model/financial-document.ts';
import type { ReconcileSettings } from './reconcile.ts';
import { streamTaxDocs } from './tax-repo.ts';
import { normalizeTaxDoc } from './normalize-tax-doc.ts';
import {
  addUpTaxMonth,
  paymentBasisDay,
  rollUpTaxDay,
  rollUpTaxPaymentDay,
  taxRollupFingerprint,
  type IndexedFinding,
  type KeptTaxBasis,
  type TaxDayRollup,
} from './tax-day-rollup.ts';
import { readTaxDayKeys, readTaxDays, readTaxFindingsOfDays, writeTaxDays } from './tax-rollups-repo.ts';

/** The order a day's (month's) documents are rolled up in: date, then id (the client-name rule reads it). */
const byDateThenId = (a: FinancialDocument, b: FinancialDocument): number => a.date - b.date || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

type ComputedDays = { kept: TaxDayRollup[]; findings: IndexedFinding[] };

/**
 * Each day's documents rolled up (days with none are left out; with `withRows`, also those whose
 * documents add no row: a payment-basis share of nothing is not kept).
 */
function rollUpDays(
  days: Map<string, FinancialDocument[]>,
  rollUp: (day: string, docs: FinancialDocument[]) => { rollup: TaxDayRollup; findings: IndexedFinding[] },
  withRows = false,
): ComputedDays {
  const kept: TaxDayRollup[] = [];
  const findings: IndexedFinding[] = [];
  for (const [day, docs] of [...days.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!docs.length) continue;
    // Document order must not matter: by date then id, as the findings are listed.
    docs.sort(byDateThenId);
    const r = rollUp(day, docs);
    if (!withRows || r.rollup.rows.length) kept.push(r.rollup);
    findings.push(...r.findings);
  }
  return { kept, findings };
}

/** Puts a document on the days of a run its payment-basis contributions lie on (paymentBasisDay, one per month of the run). */
function placeOnPaymentDays(doc: FinancialDocument, ranges: readonly { start: number; endExclusive: number }[], byDay: Map<string, FinancialDocument[]>): void {
  for (const r of ranges) {
    const day = paymentBasisDay(doc, r);
    if (day !== null) byDay.get(day)?.push(doc);
  }
}

const monthRangesOf = (run: readonly string[]) => [...new Set(run.map((d) => d.slice(0, 7)))].map(mxMonthRange);

/**
 * A run of days computed from one read of the documents (in memory, nothing written): each day's
 * invoice-basis totals and findings, from the documents emitted on it, and its share of its
 * payment-basis month, from the documents whose contribution lies on it (paymentBasisDay). The
 * run's days only, each from its own documents: a rebuild's run may skip days
 * (rebuildAcrossGaps), and a document of a skipped day written meanwhile is its mark's.
 */
export async function computeTaxDays(
  db: Db,
  tenant: string,
  run: readonly string[],
  settings: ReconcileSettings,
  maxTimeMS: number,
): Promise<{ invoice: ComputedDays; payment: ComputedDays }> {
  const first = run[0];
  const last = run[run.length - 1];
  if (first === undefined || last === undefined) return { invoice: { kept: [], findings: [] }, payment: { kept: [], findings: [] } };
  const start = mxDayStart(first);
  const end = mxDayEnd(last);
  const inRun = new Set(run);
  const emitted: FinancialDocument[] = [];
  const paid = new Map<string, FinancialDocument[]>(run.map((d) => [d, []]));
  const ranges = monthRangesOf(run);
  for await (const raw of streamTaxDocs(db, tenant, { basis: 'either', start, end }, maxTimeMS)) {
    const doc = normalizeTaxDoc(raw);
    if (doc.date >= start && doc.date <= end && inRun.has(mxDateString(doc.date))) emitted.push(doc);
    placeOnPaymentDays(doc, ranges, paid);
  }
  return {
    invoice: rollUpDays(
      groupBy(emitted, (d) => mxDateString(d.date)),
      (day, docs) => rollUpTaxDay(tenant, day, docs, settings),
    ),
    payment: rollUpDays(paid, (day, docs) => rollUpTaxPaymentDay(tenant, day, docs, settings), true),
  };
}

/**
 * A run of days' shares of payment-basis months alone (computeTaxDays computes both bases): the
 * days a change of settings left kept under others.
 */
export async function computeTaxPaymentDays(
  db: Db,
  tenant: string,
  run: readonly string[],
  settings: ReconcileSettings,
  maxTimeMS: number,
): Promise<ComputedDays> {
  const first = run[0];
  const last = run[run.length - 1];
  if (first === undefined || last === undefined) return { kept: [], findings: [] };
  const paid = new Map<string, FinancialDocument[]>(run.map((d) => [d, []]));
  const ranges = monthRangesOf(run);
  for await (const raw of streamTaxDocs(db, tenant, { basis: 'payment', start: mxDayStart(first), end: mxDayEnd(last) }, maxTimeMS))
    placeOnPaymentDays(normalizeTaxDoc(raw), ranges, paid);
  return rollUpDays(paid, (day, docs) => rollUpTaxPaymentDay(tenant, day, docs, settings), true);
}

/**
 * Payment-basis months of a tenant added up from their kept days' shares (nothing written). A
 * share kept under other settings must be recomputed first (recomputeTaxMonths does).
 */
export async function computeTaxMonths(
  db: Db,
  tenant: string,
  months: readonly string[],
  settings: ReconcileSettings,
  maxTimeMS: number,
): Promise<TaxDayRollup[]> {
  const kept: TaxDayRollup[] = [];
  for (const month of months) {
    const m = addUpTaxMonth(tenant, month, await readTaxDays(db, tenant, 'paymentDay', `${month}-01`, `${month}-31`, maxTimeMS), settings);
    if (m.rows.length) kept.push(m);
  }
  return kept;
}

/** Marks of payment-basis months ('YYYY-MM') whose days' shares changed: a month marked is added up again. */
export const TAX_MONTHS_SOURCE = 'taxMonths';

/**
 * Recomputes a run of days of a tenant from its documents and keeps them: the invoice-basis days
 * and the days' shares of payment-basis months. The shares' months are marked before and after
 * (as a document write marks its days): whatever path recomputes the days (a settle, a day kept
 * under other settings, a repair), their months are added up again before they are read.
 */
export async function recomputeTaxDays(db: Db, tenant: string, run: readonly string[], settings: ReconcileSettings, maxTimeMS: number): Promise<void> {
  const { invoice, payment } = await computeTaxDays(db, tenant, run, settings, maxTimeMS);
  await writeTaxDays(db, tenant, 'invoice', run, invoice.kept, invoice.findings, maxTimeMS);
  const months = [...new Set(run.map((d) => d.slice(0, 7)))];
  await markDays(db, tenant, TAX_MONTHS_SOURCE, months);
  await writeTaxDays(db, tenant, 'paymentDay', run, payment.kept, payment.findings, maxTimeMS);
  await markDays(db, tenant, TAX_MONTHS_SOURCE, months);
}

/**
 * Recomputes payment-basis months of a tenant (sorted, any gaps) from their kept days' shares and
 * keeps them; shares kept under other settings (a change of the tenant's) are recomputed first.
 */
export async function recomputeTaxMonths(db: Db, tenant: string, months: readonly string[], settings: ReconcileSettings, maxTimeMS: number): Promise<void> {
  const fingerprint = taxRollupFingerprint(settings);
  for (const month of months) {
    const stale = (await readTaxDays(db, tenant, 'paymentDay', `${month}-01`, `${month}-31`, maxTimeMS)).filter((d) => d.fingerprint !== fingerprint);
    if (!stale.length) continue;
    const days = stale.map((d) => d.day);
    const payment = await computeTaxPaymentDays(db, tenant, days, settings, maxTimeMS);
    await writeTaxDays(db, tenant, 'paymentDay', days, payment.kept, payment.findings, maxTimeMS);
  }
  await writeTaxDays(db, tenant, 'payment', months, await computeTaxMonths(db, tenant, months, settings, maxTimeMS), [], maxTimeMS);
}

function sameRollup(a: TaxDayRollup | undefined, b: TaxDayRollup | undefined): boolean {
  if (!a || !b) return a === b;
  return a.fingerprint === b.fingerprint && a.month === b.month && sameContent(a.rows, b.rows);
}

/** The keys (days of a run, or months) whose kept totals or findings differ from the same computed. */
async function differing(
  db: Db,
  tenant: string,
  basis: KeptTaxBasis,
  keys: readonly string[],
  computed: { kept: TaxDayRollup[]; findings: IndexedFinding[] },
  maxTimeMS: number,
): Promise<string[]> {
  const computedBy = new Map(computed.kept.map((k) => [k.day, k]));
  const stored = await readTaxDays(db, tenant, basis, keys[0] as string, keys[keys.length - 1] as string, maxTimeMS);
  const storedBy = new Map(stored.map((k) => [k.day, k]));
  // A month's findings are its days' (compared with them).
  const storedFindings = basis === 'payment' ? [] : await readTaxFindingsOfDays(db, tenant, basis, keys, maxTimeMS);
  const keyOf = (f: IndexedFinding): string => f.bucket ?? f.day;
  return keys.filter((key) => {
    const fa = storedFindings.filter((f) => keyOf(f) === key).sort((x, y) => (x._id < y._id ? -1 : 1));
    const fb = computed.findings.filter((f) => keyOf(f) === key).sort((x, y) => (x._id < y._id ? -1 : 1));
    return !sameRollup(storedBy.get(key), computedBy.get(key)) || !sameContent(fa, fb);
  });
}

/** The days of a run whose kept totals or findings (invoice basis, or shares of payment-basis months) differ from the documents'. */
export async function differingTaxDays(db: Db, tenant: string, run: readonly string[], settings: ReconcileSettings, maxTimeMS: number): Promise<string[]> {
  const computed = await computeTaxDays(db, tenant, run, settings, maxTimeMS);
  const invoice = await differing(db, tenant, 'invoice', run, computed.invoice, maxTimeMS);
  const payment = await differing(db, tenant, 'paymentDay', run, computed.payment, maxTimeMS);
  return [...new Set([...invoice, ...payment])].sort();
}

/** The payment-basis months (sorted, any gaps) whose kept totals differ from their kept days' shares added up. */
export async function differingTaxMonths(db: Db, tenant: string, months: readonly string[], settings: ReconcileSettings, maxTimeMS: number): Promise<string[]> {
  if (!months.length) return [];
  return differing(db, tenant, 'payment', months, { kept: await computeTaxMonths(db, tenant, months, settings, maxTimeMS), findings: [] }, maxTimeMS);
}

/** The keys (days, or months) a tenant's kept totals of a basis hold. */
export const keptTaxKeys = (db: Db, tenant: string, basis: KeptTaxBasis, maxTimeMS: number): Promise<string[]> => readTaxDayKeys(db, tenant, basis, maxTimeMS);
