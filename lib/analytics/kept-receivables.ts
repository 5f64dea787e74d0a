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
import { openAtFromMonths, type OpenAtInstant } from './open-item-months.ts';
import type { OpenReceivable } from './receivables-aging.ts';
import { PaymentDelaysAccumulator } from './forecast.ts';
import { clientRevenueRows, streamPaymentHistory, type ClientRevenueRow, type RevenueGroup } from './receivables-repo.ts';
import {
  daysClosingAfter,
  openNowDaysChangedAfter,
  readOpenItemMonthsAt,
  readOpenItemsByKey,
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

/** At most this many entries closed after the as-of instant, on at most this many days, are read one by one; beyond, the months of open items are. */
const MAX_LATE_ENTRIES = 2000;
const MAX_LATE_DAYS = 16;

/** The invoices open at an instant as kept sums per invoice day and client (open-now.ts). */
export interface OpenSums {
  days: OpenNowDay[];
  /** The days whose sums were computed at the instant, not read kept ('all': every day's, from the months of open items). */
  late: ReadonlySet<string> | 'all';
  /** The invoices of those days open at the instant, with their balance then (client filter applied): the items' candidates. */
  lateItems: OpenAtInstant[];
}

/**
 * The invoices open at instant `asOf` as sums per invoice day and client. The kept sums of a day
 * hold at asOf when no balance of its open entries changed after asOf (its `horizon`) and none
 * of its entries closed after asOf; the few other days (a record dated later than asOf: an as-of
 * day just past, or a record dated in the future) are summed from their entries at asOf. When
 * they are too many (an as-of day further back), every day is summed from the months of open
 * items that hold asOf (open-item-months.ts).
 */
export async function keptOpenSums(db: Db, tenant: string, asOf: number, client: string | undefined, maxTimeMS: number): Promise<OpenSums> {
  // An as-of day further back changed on many days: the months of open items, read nothing more first.
  const late = new Set(await openNowDaysChangedAfter(db, tenant, asOf, MAX_LATE_DAYS, maxTimeMS));
  const closing = late.size > MAX_LATE_DAYS ? null : await daysClosingAfter(db, tenant, asOf, client, MAX_LATE_ENTRIES, maxTimeMS);
  for (const day of closing ?? []) late.add(day);
  if (closing === null || late.size > MAX_LATE_DAYS) {
    const { days, items } = openAtFromMonths(tenant, await readOpenItemMonthsAt(db, tenant, asOf, maxTimeMS), asOf, client);
    return { days, late: 'all', lateItems: items };
  }
  const kept = await readOpenNowDays(db, tenant, maxTimeMS);
  const days = kept.filter((d) => !late.has(d.day));
  const lateItems: OpenAtInstant[] = [];
  if (late.size) {
    const entries = (await readOpenItemsOfDays(db, tenant, [...late], maxTimeMS)).filter((e) => client === undefined || e.client === client);
    for (const day of late) {
      const sums = openDayAt(tenant, day, entries, asOf);
      if (sums) days.push(sums);
    }
    for (const e of entries) {
      const outstanding = itemOutstandingAt(e, asOf);
      if (outstanding !== null) lateItems.push({ key: e._id, id: e.id, client: e.client, day: e.day, invoiceDate: e.date, outstanding });
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

/** What an item ranks by: a report ranks invoices by a day computed from these, then by id. */
export type RankedOpen = Pick<OpenReceivable, 'id' | 'client' | 'invoiceDate' | 'outstanding'>;

const byRank = <T extends { r: string; id: string }>(a: T, b: T): number => (a.r < b.r ? -1 : a.r > b.r ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * The first `limit` of the late days' invoices by (rank, id), their other fields read by `_id`
 * (a report lists at most `limit` of them: it reads that many entries, not every one open then).
 * Each ranks on or after its invoice day + `minOffset`: the days are ranked oldest first until
 * `limit` rank on or before the day after which every invoice not ranked ranks.
 */
async function firstLateItems(
  db: Db,
  tenant: string,
  late: readonly OpenAtInstant[],
  limit: number,
  minOffset: number,
  rank: (e: RankedOpen) => string | null,
  maxTimeMS: number,
): Promise<OpenReceivable[]> {
  if (limit <= 0 || !Number.isFinite(minOffset) || !late.length) return [];
  const byDay = new Map<string, OpenAtInstant[]>();
  for (const inv of late) {
    const list = byDay.get(inv.day);
    if (list) list.push(inv);
    else byDay.set(inv.day, [inv]);
  }
  const ranked: { inv: OpenAtInstant; id: string; r: string }[] = [];
  // How many rank on or before the bound, and the ranks after it (the bound only grows).
  let atMost = 0;
  let after: string[] = [];
  for (const day of [...byDay.keys()].sort()) {
    const bound = mxAddDays(day, minOffset);
    atMost += after.filter((r) => r <= bound).length;
    after = after.filter((r) => r > bound);
    for (const inv of byDay.get(day) as OpenAtInstant[]) {
      const r = rank(inv);
      if (r === null) continue;
      ranked.push({ inv, id: inv.id, r });
      if (r <= bound) atMost += 1;
      else after.push(r);
    }
    if (atMost >= limit) break;
  }
  const first = ranked
    .sort(byRank)
    .slice(0, limit)
    .map((x) => x.inv);
  const details = new Map(
    (
      await readOpenItemsByKey(
        db,
        tenant,
        first.map((inv) => inv.key),
        maxTimeMS,
      )
    ).map((e) => [e._id, e] as const),
  );
  const out: OpenReceivable[] = [];
  for (const inv of first) {
    const e = details.get(inv.key);
    // An invoice deleted since the sums were read has no entry left: not listed.
    if (e)
      out.push({
        id: e.id,
        uuid: e.uuid,
        client: e.client,
        clientName: e.clientName,
        invoiceDate: e.date,
        outstanding: inv.outstanding,
        currency: e.currency ?? 'MXN',
        exchangeRate: rateOf(e),
      });
  }
  return out;
}

/**
 * The invoices open at the sums' instant that may be among a report's first `limit` items (the
 * late days' first and those of the kept days' entries open now that may rank first), which rank by a day
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
  rank: (e: RankedOpen) => string | null,
  sums: OpenSums,
  maxTimeMS: number,
): Promise<OpenReceivable[]> {
  const out = await firstLateItems(db, tenant, sums.lateItems, limit, minOffset, rank, maxTimeMS);
  const late = sums.late;
  const ranks: string[] = [];
  if (late === 'all' || limit <= 0 || !Number.isFinite(minOffset)) return out;
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
      if (late.has(e.day)) continue;
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
 * The payment delays of the complements dated in [from, asOf] (from: the first instant of
 * `startDate`) valid at asOf: the kept days' lags shifted by each client's credit days (a count
 * whose cancellation took effect by asOf, `until` ≤ asOf, no longer counts; one cancelled later
 * still does), and the documents of a last day asOf cuts short (today's, before its end).
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
    for (const p of day.paid)
      if ((q.client === undefined || p.client === q.client) && !(p.until !== undefined && p.until <= q.asOf))
        acc.addDelays(p.client, p.lag - Math.round(creditDays(p.client)), p.n);
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

/**
 * Revenue by client of the invoices emitted in [startDate, endDate] (whole days), from the kept
 * days, each judged cancelled or not as of `asOf` as revenueByClient does: a group whose
 * cancellation took effect by asOf (`until` ≤ asOf) is cancelled, one cancelled later is still revenue.
 */
export function keptRevenueByClient(
  keptDays: readonly ReceivablesDay[],
  q: { startDate: string; endDate: string; asOf: number; client?: string },
): ClientRevenueRow[] {
  const groups = new Map<string, RevenueGroup>();
  for (const day of keptDays) {
    if (day.day < q.startDate || day.day > q.endDate) continue;
    for (const g of day.revenue) {
      if (q.client !== undefined && g.client !== q.client) continue;
      const cancelled = g.cancelled || (g.until !== undefined && g.until <= q.asOf);
      const k = `${g.client}|${cancelled}|${g.rate}`;
      const sum = groups.get(k) ?? { client: g.client, cancelled, rate: g.rate, documents: 0, revenueC: 0, totalC: 0 };
      sum.documents += g.documents;
      sum.revenueC += g.revenueC;
      sum.totalC += g.totalC;
      groups.set(k, sum);
    }
  }
  return clientRevenueRows(groups.values());
}
