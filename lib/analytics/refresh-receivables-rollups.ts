/**
 * How the as-of reports' forms are kept (docs/rollups.md "Receivables"): a run of days computed
 * from the documents (the open items of the invoices emitted on them, the revenue of those
 * invoices, the payment complements dated on them), kept, and compared with what is kept. The
 * lifecycle around them (marks, drain, rebuild, verify) is receivables-rollup-kind.ts.
 */
import type { Db } from 'mongodb';
import { financialDocs } from '../db/collections.ts';
import { elementInRange } from '../db/pipeline.ts';
import { mxDateString, mxDayEnd, mxDayStart } from '../time/mexico-city.ts';
import { sameContent } from '../shared/same-content.ts';
import { openItemOf, type OpenItem, type OpenItemSource } from './open-items.ts';
import { rollUpReceivablesDay, type ReceivablesDay, type ReceivablesDaySource } from './receivables-day.ts';
import {
  openItemDays,
  readOpenItemMonthsOfDays,
  readOpenItemsOfDays,
  readOpenNowDaysOf,
  readReceivablesDays,
  writeReceivablesDays,
} from './receivables-rollups-repo.ts';
import { openItemMonthsOf, type OpenItemMonth } from './open-item-months.ts';
import { openSpansOf, type OpenSpanDoc } from './open-spans.ts';
import { readOpenSpansOfDays } from './open-spans-repo.ts';
import { openNowDayOf, type OpenNowDay } from './open-now.ts';

type SourceDoc = OpenItemSource & ReceivablesDaySource & { timestamp?: number };

const PROJECTION = {
  _id: 1,
  id: 1,
  client: 1,
  clientName: 1,
  date: 1,
  timestamp: 1,
  iTot: 1,
  iSub: 1,
  iDesc: 1,
  iFalt: 1,
  currency: 1,
  exchangeRate: 1,
  'invoice.uuid': 1,
  'invoice.paymentMethod': 1,
  payments: 1,
  canceled: 1,
} as const;

function groupByDay<T>(docs: readonly T[], dayOf: (d: T) => string[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const d of docs)
    for (const day of dayOf(d)) {
      let list = out.get(day);
      if (!list) out.set(day, (list = []));
      list.push(d);
    }
  return out;
}

/**
 * The days of a run and their invoices' entries computed from the documents (in memory, nothing
 * written): the run's days only, each from its own day's documents (a rebuild's run may skip days).
 */
export async function computeReceivablesDays(
  db: Db,
  tenant: string,
  run: readonly string[],
  maxTimeMS: number,
): Promise<{ kept: ReceivablesDay[]; entries: OpenItem[]; spans: OpenSpanDoc[]; months: OpenItemMonth[]; open: OpenNowDay[] }> {
  const start = mxDayStart(run[0] as string);
  const end = mxDayEnd(run[run.length - 1] as string);
  // One read for both: the invoices emitted in the run and those with a payment dated in it (tenant first in each branch: tenant_date, tenant_payment_date).
  const docs = (await financialDocs(db)
    .find(
      {
        company: tenant,
        $or: [
          { company: tenant, date: { $gte: start, $lte: end } },
          { company: tenant, ...elementInRange('payments', 'date', start, end) },
        ],
      },
      { projection: PROJECTION, maxTimeMS, batchSize: 5000 },
    )
    .toArray()) as SourceDoc[];
  const emitted = docs.filter((d) => typeof d.date === 'number' && d.date >= start && d.date <= end);
  const inRun = new Set(run);
  const emittedBy = groupByDay(emitted, (d) => [mxDateString(d.date)]);
  const paidBy = groupByDay(docs, (d) => {
    const dated = (d.payments ?? []).filter((p) => typeof p.date === 'number' && p.date >= start && p.date <= end);
    return [...new Set(dated.map((p) => mxDateString(p.date)))].filter((day) => inRun.has(day));
  });
  const kept: ReceivablesDay[] = [];
  const entries: OpenItem[] = [];
  const spans: OpenSpanDoc[] = [];
  const months: OpenItemMonth[] = [];
  const open: OpenNowDay[] = [];
  for (const day of run) {
    const docs = emittedBy.get(day) ?? [];
    const k = rollUpReceivablesDay(tenant, day, { start: mxDayStart(day), end: mxDayEnd(day) }, docs, paidBy.get(day) ?? []);
    if (k) kept.push(k);
    const dayEntries: OpenItem[] = [];
    for (const d of docs) {
      const e = openItemOf(tenant, d);
      if (e) dayEntries.push(e);
      spans.push(...openSpansOf(tenant, d));
    }
    entries.push(...dayEntries);
    months.push(...openItemMonthsOf(tenant, day, dayEntries));
    const sums = openNowDayOf(tenant, day, dayEntries);
    if (sums) open.push(sums);
  }
  return { kept, entries, spans, months, open };
}

/** Recomputes a run of days of a tenant from its documents and keeps them. */
export async function recomputeReceivablesDays(db: Db, tenant: string, run: readonly string[], maxTimeMS: number): Promise<void> {
  const { kept, entries, spans, months, open } = await computeReceivablesDays(db, tenant, run, maxTimeMS);
  await writeReceivablesDays(db, tenant, run, kept, entries, spans, months, open, maxTimeMS);
}

/** The days of a run whose kept day, open items, list spans, months of open items or sums of the invoices open now differ from the documents'. */
export async function differingReceivablesDays(db: Db, tenant: string, run: readonly string[], maxTimeMS: number): Promise<string[]> {
  const { kept, entries, spans, months, open } = await computeReceivablesDays(db, tenant, run, maxTimeMS);
  const storedMonths = await readOpenItemMonthsOfDays(db, tenant, run, maxTimeMS);
  const storedOpen = new Map((await readOpenNowDaysOf(db, tenant, run, maxTimeMS)).map((k) => [k.day, k] as const));
  const computedOpen = new Map(open.map((k) => [k.day, k] as const));
  const storedDays = new Map(
    (await readReceivablesDays(db, tenant, run[0] as string, run[run.length - 1] as string, maxTimeMS)).map((k) => [k.day, k] as const),
  );
  const computedDays = new Map(kept.map((k) => [k.day, k] as const));
  const stored = await readOpenItemsOfDays(db, tenant, run, maxTimeMS);
  const storedSpans = await readOpenSpansOfDays(db, tenant, run, maxTimeMS);
  const byId = <T extends { _id: string }>(list: T[]): T[] => list.sort((x, y) => (x._id < y._id ? -1 : 1));
  return run.filter((day) => {
    const a = storedDays.get(day);
    const b = computedDays.get(day);
    const ea = stored.filter((e) => e.day === day).sort((x, y) => (x._id < y._id ? -1 : 1));
    const eb = entries.filter((e) => e.day === day).sort((x, y) => (x._id < y._id ? -1 : 1));
    const sa = byId(storedSpans.filter((e) => e.day === day));
    const sb = byId(spans.filter((e) => e.day === day));
    const ma = byId(storedMonths.filter((m) => m.day === day));
    const mb = byId(months.filter((m) => m.day === day));
    const oa = storedOpen.get(day);
    const ob = computedOpen.get(day);
    return (
      (a && b ? !sameContent(a, b) : a !== b) ||
      !sameContent(ea, eb) ||
      !sameContent(sa, sb) ||
      !sameContent(ma, mb) ||
      (oa && ob ? !sameContent(oa, ob) : oa !== ob)
    );
  });
}

/** The days a tenant's kept forms hold: kept days and the days of the open items. */
export async function keptReceivablesDays(db: Db, tenant: string, maxTimeMS: number): Promise<Set<string>> {
  const out = await openItemDays(db, tenant);
  for (const k of await readReceivablesDays(db, tenant, '0000-00-00', '9999-99-99', maxTimeMS)) out.add(k.day);
  return out;
}
