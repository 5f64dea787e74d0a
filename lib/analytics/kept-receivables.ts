/**
 * What the as-of reports read from the kept forms (docs/rollups.md "Receivables") instead of the
 * documents: the invoices open at an instant (the open-items index), the payment delays of a
 * period and its revenue by client (the kept days). Each answers what the document queries of
 * receivables-repo.ts answer, in a form the reports fold the same way.
 */
import type { Db } from 'mongodb';
import { mxAddDays, mxDateString, mxDayEnd, mxDayStart } from '../time/mexico-city.ts';
import { openDayAt, type OpenNowDay } from './open-now.ts';
import { rateOf } from '../money/currency.ts';
import { itemOutstandingAt } from './open-items.ts';
import type { OpenReceivable } from './receivables-aging.ts';
import { PaymentDelaysAccumulator } from './forecast.ts';
import { clientRevenueRows, streamPaymentHistory, type ClientRevenueRow, type RevenueGroup } from './receivables-repo.ts';
import {
  daysClosingAfter,
  openNowDaysChangedAfter,
  readOpenItemsAt,
  readOpenItemsOfDays,
  readOpenNowDays,
  readOpenNowPage,
  readReceivablesDays,
  type OpenNowRead,
} from './receivables-rollups-repo.ts';
import type { ReceivablesDay } from './receivables-day.ts';
import { receivablesRollups, settleReceivablesMarks } from './receivables-rollup-kind.ts';

/**
 * Whether a report reads the kept forms: the store was built by this version and the report was
 * not asked for the documents. Then the marked days up to `lastDay` are settled first.
 */
export async function useKeptReceivables(db: Db, tenant: string, lastDay: string, maxTimeMS: number, fromDocuments: boolean | undefined): Promise<boolean> {
  if (fromDocuments || !(await receivablesRollups.ready(db))) return false;
  await settleReceivablesMarks(db, tenant, lastDay, maxTimeMS);
  return true;
}

/** The invoices open at instant `asOf` with their outstanding MXN balance (the reports fold them in any order). */
export async function keptOpenReceivables(db: Db, tenant: string, asOf: number, client: string | undefined, maxTimeMS: number): Promise<OpenReceivable[]> {
  const out: OpenReceivable[] = [];
  for (const e of await readOpenItemsAt(db, tenant, asOf, client, maxTimeMS)) {
    const outstanding = itemOutstandingAt(e, asOf);
    if (outstanding === null) continue;
    out.push({
      id: e.id,
      uuid: e.uuid,
      client: e.client,
      clientName: e.clientName,
      invoiceDate: e.date,
      outstanding,
      currency: e.currency ?? 'MXN',
      exchangeRate: rateOf(e),
    });
  }
  return out;
}

/** At most this many entries closed after the as-of instant, on at most this many days, are read one by one; beyond, the open items at asOf are. */
const MAX_LATE_ENTRIES = 2000;
const MAX_LATE_DAYS = 16;

/** The invoices open at an instant as kept sums per invoice day and client (open-now.ts). */
export interface OpenSums {
  days: OpenNowDay[];
  /** The days whose sums were computed at the instant from their entries, not read kept. */
  late: ReadonlySet<string>;
  /** The invoices of those days open at the instant, with their balance then (client filter applied): items on their own. */
  lateItems: OpenReceivable[];
}

/**
 * The invoices open at instant `asOf` as sums per invoice day and client. The kept sums of a day
 * hold at asOf when no balance of its open entries changed after asOf (its `horizon`) and none
 * of its entries closed after asOf; the few other days (a record dated later than asOf: an as-of
 * day just past, or a record dated in the future) are summed from their entries at asOf. Null
 * when they are too many (an as-of day further back reads the open items at asOf).
 */
export async function keptOpenSums(db: Db, tenant: string, asOf: number, client: string | undefined, maxTimeMS: number): Promise<OpenSums | null> {
  // An as-of day further back changed on many days: the open items at asOf, read nothing more first.
  const late = new Set(await openNowDaysChangedAfter(db, tenant, asOf, MAX_LATE_DAYS, maxTimeMS));
  if (late.size > MAX_LATE_DAYS) return null;
  const closing = await daysClosingAfter(db, tenant, asOf, client, MAX_LATE_ENTRIES, maxTimeMS);
  if (closing === null) return null;
  for (const day of closing) late.add(day);
  if (late.size > MAX_LATE_DAYS) return null;
  const kept = await readOpenNowDays(db, tenant, maxTimeMS);
  const days = kept.filter((d) => !late.has(d.day));
  const lateItems: OpenReceivable[] = [];
  if (late.size) {
    const entries = (await readOpenItemsOfDays(db, tenant, [...late], maxTimeMS)).filter((e) => client === undefined || e.client === client);
    for (const day of late) {
      const sums = openDayAt(tenant, day, entries, asOf);
      if (sums) days.push(sums);
    }
    for (const e of entries) {
      const outstanding = itemOutstandingAt(e, asOf);
      if (outstanding !== null) lateItems.push({ ...openNowReceivable(e), outstanding });
    }
  }
  return { days, late, lateItems };
}

/** An entry open now as the reports fold it: its last span's balance. */
export function openNowReceivable(e: OpenNowRead): OpenReceivable {
  return {
    id: e.id,
    uuid: e.uuid,
    client: e.client,
    clientName: e.clientName,
    invoiceDate: e.date,
    outstanding: e.spans[e.spans.length - 1]?.outstanding ?? 0,
    currency: e.currency ?? 'MXN',
    exchangeRate: rateOf(e),
  };
}

/**
 * The invoices open at the sums' instant that may be among a report's first `limit` items (the
 * late days' and those of the kept days' entries open now that may rank first), which rank by a day
 * (`rank`: the invoice day + at least `minOffset` days; null: not an item) then by id. The
 * entries are read by invoice day, a page at a time and whole days only, until `limit` of those
 * read rank on or before the day after which every entry not read ranks: so a report reads about
 * its items, not every open invoice. The caller sorts what this answers.
 */
export async function keptFirstOpenNow(
  db: Db,
  tenant: string,
  client: string | undefined,
  limit: number,
  minOffset: number,
  rank: (e: OpenReceivable) => string | null,
  sums: OpenSums,
  maxTimeMS: number,
): Promise<OpenReceivable[]> {
  // The late days' invoices are all candidates; the kept days' entries open now are read below.
  const out: OpenReceivable[] = sums.lateItems.filter((inv) => rank(inv) !== null);
  const ranks: string[] = [];
  if (limit <= 0 || !Number.isFinite(minOffset)) return out;
  let after = '';
  let size = 2 * limit + 64;
  for (;;) {
    const page = await readOpenNowPage(db, tenant, client, after, size, maxTimeMS);
    const full = page.length === size;
    const lastDay = page[page.length - 1]?.day;
    // A full page may end within a day: that day is read again whole from the next page on.
    const whole = full ? page.filter((e) => e.day !== lastDay) : page;
    if (!whole.length && full) {
      size *= 2;
      continue;
    }
    for (const e of whole) {
      if (sums.late.has(e.day)) continue;
      const inv = openNowReceivable(e);
      const r = rank(inv);
      if (r === null) continue;
      out.push(inv);
      ranks.push(r);
    }
    const lastWhole = whole[whole.length - 1];
    if (!full || !lastWhole) return out;
    after = lastWhole.day;
    // Every entry not read yet was emitted after `after`, so it ranks after this day.
    const bound = mxAddDays(after, minOffset);
    if (ranks.filter((r) => r <= bound).length >= limit) return out;
  }
}

/** The kept days a forecast reads, [startDate, lastDay] (its period and up to its as-of day): one read serves both uses below. */
export function readForecastDays(db: Db, tenant: string, startDate: string, lastDay: string, maxTimeMS: number): Promise<ReceivablesDay[]> {
  return readReceivablesDays(db, tenant, startDate, lastDay, maxTimeMS);
}

/**
 * The payment delays of the valid complements dated in [from, asOf] (from: the first instant of
 * `startDate`): the kept days' lags shifted by each client's credit days, and the documents of a
 * last day asOf cuts short (today's, before its end).
 */
export async function keptPaymentDelays(
  db: Db,
  tenant: string,
  keptDays: readonly ReceivablesDay[],
  q: { startDate: string; asOf: number; client?: string },
  creditDays: (client: string) => number,
  acc: PaymentDelaysAccumulator,
  maxTimeMS: number,
): Promise<void> {
  const from = mxDayStart(q.startDate);
  if (q.asOf < from) return;
  const asOfDay = mxDateString(q.asOf);
  const whole = q.asOf === mxDayEnd(asOfDay);
  const lastKept = whole ? asOfDay : mxAddDays(asOfDay, -1);
  for (const day of keptDays) {
    if (day.day < q.startDate || day.day > lastKept) continue;
    for (const p of day.paid) if (q.client === undefined || p.client === q.client) acc.addDelays(p.client, p.lag - Math.round(creditDays(p.client)), p.n);
  }
  if (whole) return;
  for await (const row of streamPaymentHistory(
    db,
    tenant,
    { from: Math.max(from, mxDayStart(asOfDay)), to: q.asOf, ...(q.client ? { client: q.client } : {}) },
    maxTimeMS,
  ))
    acc.addInvoice(row, creditDays);
}

/** Revenue by client of the invoices emitted in [startDate, endDate] (whole days), from the kept days. */
export function keptRevenueByClient(keptDays: readonly ReceivablesDay[], q: { startDate: string; endDate: string; client?: string }): ClientRevenueRow[] {
  const groups = new Map<string, RevenueGroup>();
  for (const day of keptDays) {
    if (day.day < q.startDate || day.day > q.endDate) continue;
    for (const g of day.revenue) {
      if (q.client !== undefined && g.client !== q.client) continue;
      const k = `${g.client}|${g.cancelled}|${g.rate}`;
      const sum = groups.get(k) ?? { ...g, documents: 0, revenueC: 0, totalC: 0 };
      sum.documents += g.documents;
      sum.revenueC += g.revenueC;
      sum.totalC += g.totalC;
      groups.set(k, sum);
    }
  }
  return clientRevenueRows(groups.values());
}
