/**
 * How the tax position is kept (docs/rollups.md, "Tax position and DIOT"): a day computed from the
 * documents with a line on it (the issued invoices whose last collection of the month is on it,
 * the received CFDIs settled on it), a month added up from its kept days, each kept and compared
 * with what is kept. The lifecycle around them (the marks of both sources, drain, rebuild,
 * verify) is tax-position-rollup-kind.ts.
 */
import type { Db } from 'mongodb';
import { financialDocHistoryDays } from '../finance/financial-docs-repo.ts';
import { receivedDocDays } from '../received/received-doc-days.ts';
import { streamReceivedDocDays } from '../received/received-repo.ts';
import { groupBy } from '../shared/group-by.ts';
import { sameContent } from '../shared/same-content.ts';
import { mxDateString, mxDayEnd, mxDayStart } from '../time/mexico-city.ts';
import { documentCountingLines } from './diot.ts';
import { normalizeTaxDoc } from './normalize-tax-doc.ts';
import { inPaymentBasisPeriod, streamTaxDocs } from './tax-repo.ts';
import { streamSettledReceivedDocs } from './tax-position-repo.ts';
import { monthRange } from './tax-position-month.ts';
import { issuedLines, paymentLines, type CollectionLine, type PaymentLine } from './tax-position.ts';
import { rollUpTaxPositionDay, rollUpTaxPositionMonth, type KeptDay, type KeptMonth, type TaxPositionLineEntry } from './tax-position-rollup.ts';
import {
  readAllTaxPositionDayKeys,
  readAllTaxPositionMonths,
  readTaxPositionDays,
  readTaxPositionDaysOf,
  readTaxPositionLinesOf,
  readTaxPositionMonths,
  writeTaxPositionDays,
  writeTaxPositionMonths,
} from './tax-position-rollups-repo.ts';

interface DayRows {
  collections: CollectionLine[];
  payments: PaymentLine[];
  counting: Set<PaymentLine>;
}

/**
 * Days of a tenant (sorted, any gaps) computed from their documents (in memory, nothing written):
 * one read of each collection for the run's span, each document's lines of every month of the
 * run, each line kept on the day of its date when that day is in the run.
 */
export async function computeTaxPositionDays(db: Db, tenant: string, days: readonly string[], maxTimeMS: number): Promise<Map<string, KeptDay>> {
  const first = days[0];
  const last = days[days.length - 1];
  if (first === undefined || last === undefined) return new Map();
  const rows = new Map<string, DayRows>(days.map((d) => [d, { collections: [], payments: [], counting: new Set() }]));
  const ranges = [...new Set(days.map((d) => d.slice(0, 7)))].map(monthRange);
  const start = mxDayStart(first);
  const end = mxDayEnd(last);
  for await (const raw of streamTaxDocs(db, tenant, { basis: 'payment', start, end }, maxTimeMS)) {
    const hits = ranges.filter((r) => inPaymentBasisPeriod(raw, r.start, r.endExclusive - 1));
    if (!hits.length) continue;
    const doc = normalizeTaxDoc(raw);
    for (const r of hits) {
      for (const line of issuedLines(doc, r)) rows.get(mxDateString(line.date))?.collections.push(line);
    }
  }
  for await (const doc of streamSettledReceivedDocs(db, tenant, start, end, maxTimeMS))
    for (const r of ranges) {
      // All of the month's lines of the document: which of them counts it in its DIOT row depends on the others.
      const month = paymentLines(doc, r);
      const counting = documentCountingLines(month);
      for (const line of month) {
        const day = rows.get(mxDateString(line.date));
        if (!day) continue;
        day.payments.push(line);
        if (counting.has(line)) day.counting.add(line);
      }
    }
  return new Map(days.map((d) => [d, rollUpTaxPositionDay(tenant, d, rows.get(d)!.collections, rows.get(d)!.payments, (l) => rows.get(d)!.counting.has(l))]));
}

/** Recomputes days of a tenant (a write's, or a rebuild's run) from their documents and keeps them. */
export async function recomputeTaxPositionDays(db: Db, tenant: string, days: readonly string[], maxTimeMS: number): Promise<void> {
  await writeTaxPositionDays(db, tenant, await computeTaxPositionDays(db, tenant, days, maxTimeMS), maxTimeMS);
}

/** Months of a tenant added up from their kept days (nothing written). */
export async function computeTaxPositionMonths(db: Db, tenant: string, months: readonly string[], maxTimeMS: number): Promise<Map<string, KeptMonth>> {
  const out = new Map<string, KeptMonth>();
  for (const month of months)
    out.set(month, rollUpTaxPositionMonth(tenant, month, await readTaxPositionDays(db, tenant, `${month}-01`, `${month}-31`, maxTimeMS)));
  return out;
}

/** Recomputes months of a tenant from their kept days and keeps them. */
export async function recomputeTaxPositionMonths(db: Db, tenant: string, months: readonly string[], maxTimeMS: number): Promise<void> {
  await writeTaxPositionMonths(db, tenant, await computeTaxPositionMonths(db, tenant, months, maxTimeMS), maxTimeMS);
}

const byId = <T extends { _id: string }>(xs: readonly T[]): T[] => [...xs].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));

/** Days of kept lines read at once by a verify. */
const VERIFY_LINE_DAYS = 7;

/** Kept lines by their day (or month): a run's, compared day by day. */
const byBucket = (entries: readonly TaxPositionLineEntry[]): Map<string, TaxPositionLineEntry[]> => groupBy(entries, (e) => e.bucket);

/** Whether a kept document (or its absence) and its lines are the computed ones. */
function sameKept<T extends object>(
  stored: T | null,
  computed: T | null,
  storedLines: readonly { _id: string }[],
  computedLines: readonly { _id: string }[],
): boolean {
  const same = stored === null || computed === null ? stored === computed : sameContent(stored, computed);
  return same && sameContent(byId(storedLines), byId(computedLines));
}

/** The days whose kept form (figures, DIOT shares, lines) differs from the same computed from the documents. */
export async function differingTaxPositionDays(db: Db, tenant: string, days: readonly string[], maxTimeMS: number): Promise<string[]> {
  if (!days.length) return [];
  const computed = await computeTaxPositionDays(db, tenant, days, maxTimeMS);
  const stored = new Map((await readTaxPositionDaysOf(db, tenant, days, maxTimeMS)).map((k) => [k.day, k]));
  const differ: string[] = [];
  // The kept lines a week at a time: the embedded engine holds a find's every match at once (a verify's run of 92 days
  // at 1M/1M is ~550,000 lines, past its default heap).
  for (let i = 0; i < days.length; i += VERIFY_LINE_DAYS) {
    const week = days.slice(i, i + VERIFY_LINE_DAYS);
    const lines = byBucket(await readTaxPositionLinesOf(db, tenant, week, maxTimeMS));
    for (const day of week) {
      const c = computed.get(day) as KeptDay;
      if (!sameKept(stored.get(day) ?? null, c.day, lines.get(day) ?? [], c.entries)) differ.push(day);
    }
  }
  return differ;
}

/** The months whose kept form (figures, DIOT rows) differs from the same added up from their kept days. */
export async function differingTaxPositionMonths(db: Db, tenant: string, months: readonly string[], maxTimeMS: number): Promise<string[]> {
  if (!months.length) return [];
  const computed = await computeTaxPositionMonths(db, tenant, months, maxTimeMS);
  const stored = new Map((await readTaxPositionMonths(db, tenant, months, maxTimeMS)).map((k) => [k.month, k]));
  const rows = byBucket(await readTaxPositionLinesOf(db, tenant, months, maxTimeMS));
  return months.filter((month) => {
    const c = computed.get(month) as KeptMonth;
    return !sameKept(stored.get(month) ?? null, c.month, rows.get(month) ?? [], c.entries);
  });
}

/** The days a tenant's kept form holds. */
export const keptTaxPositionDays = readAllTaxPositionDayKeys;

/** The months a tenant's kept form holds. */
export async function keptTaxPositionMonths(db: Db, tenant: string, maxTimeMS: number): Promise<string[]> {
  return (await readAllTaxPositionMonths(db, tenant, maxTimeMS)).map((k) => k.month);
}

/** Every day a tenant's documents touch: of its financial documents, and of its received CFDIs. */
export async function documentDays(db: Db, tenant: string): Promise<{ issued: Set<string>; received: Set<string> }> {
  // A read a rebuild of every kind shares.
  const issued = new Set((await financialDocHistoryDays(db, tenant)).touched);
  const received = new Set<string>();
  for await (const d of streamReceivedDocDays(db, tenant)) for (const day of receivedDocDays(d)) received.add(day);
  return { issued, received };
}
