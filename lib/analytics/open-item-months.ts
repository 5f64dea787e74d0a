/**
 * The open items by month (docs/rollups.md "Receivables"): per tenant, invoice day and Mexico
 * City month, the spans of that day's entries that touch the month (and, under month `open`, the
 * spans open now), packed. Any instant T lies in one month, and a span holding T touches T's
 * month or is open now: so "open at T" reads two documents per invoice day whatever the day
 * (a few MB at a million invoices), not each open entry, when T is too far back for the sums of
 * the invoices open now (open-now.ts) to hold.
 */
import { mxMonthKey } from '../time/mexico-city.ts';
import { OPEN_END, type OpenItem } from './open-items.ts';
import { daySums, type OpenNowDay } from './open-now.ts';
import { monthsOf, OPEN_MONTH } from './open-spans.ts';

/** An entry as the month's spans name it: what the sums and an item's rank read (its other fields are read for listed items only). */
export interface MonthEntry {
  /** The entry's `_id` in the open-items index. */
  key: string;
  id: string;
  client: string;
  clientName: string;
  /** Invoice instant, epoch ms. */
  date: number;
}

/** One stretch of an entry with its balance: [from, to), to = OPEN_END while open now. */
export interface MonthSpan {
  /** Index into the month's `entries`. */
  entry: number;
  from: number;
  to: number;
  outstanding: number;
}

export interface OpenItemMonth {
  /** `${tenant}|${day}|${month}`. */
  _id: string;
  tenant: string;
  /** Mexico City day of the invoices: a recomputed day replaces its months. */
  day: string;
  /** 'YYYY-MM', or OPEN_MONTH for the spans open now. */
  month: string;
  entries: MonthEntry[];
  spans: MonthSpan[];
}

export const openItemMonthId = (tenant: string, day: string, month: string): string => `${tenant}|${day}|${month}`;

/** The months of one invoice day's entries (all of that day), in month order, OPEN_MONTH last. */
export function openItemMonthsOf(tenant: string, day: string, entries: readonly OpenItem[]): OpenItemMonth[] {
  const months = new Map<string, OpenItemMonth>();
  for (const e of entries) {
    if (e.day !== day) continue;
    const refs = new Map<OpenItemMonth, number>();
    for (const s of e.spans) {
      const to = s.to ?? OPEN_END;
      for (const month of to === OPEN_END ? [OPEN_MONTH] : monthsOf(s.from, to)) {
        let m = months.get(month);
        if (!m) months.set(month, (m = { _id: openItemMonthId(tenant, day, month), tenant, day, month, entries: [], spans: [] }));
        let entry = refs.get(m);
        if (entry === undefined) {
          entry = m.entries.push({ key: e._id, id: e.id, client: e.client, clientName: e.clientName, date: e.date }) - 1;
          refs.set(m, entry);
        }
        m.spans.push({ entry, from: s.from, to, outstanding: s.outstanding });
      }
    }
  }
  // 'open' sorts after every 'YYYY-MM'.
  return [...months.values()].sort((a, b) => (a.month < b.month ? -1 : a.month > b.month ? 1 : 0));
}

/** An invoice open at an instant, as ranked for a report's items: the listed ones' other fields are read by `key`. */
export interface OpenAtInstant {
  key: string;
  id: string;
  client: string;
  /** Mexico City day of the invoice. */
  day: string;
  invoiceDate: number;
  outstanding: number;
}

/**
 * The invoices open at instant `t` from the months of open items (those read for it: T's month
 * and OPEN_MONTH, the days up to T's; any other is skipped): the sums per invoice day and client,
 * as the sums of now are kept (daySums), and each invoice with its balance then. `client` keeps
 * one client's only.
 */
export function openAtFromMonths(
  tenant: string,
  months: readonly Pick<OpenItemMonth, 'day' | 'month' | 'entries' | 'spans'>[],
  t: number,
  client: string | undefined,
): { days: OpenNowDay[]; items: OpenAtInstant[] } {
  // An entry's spans do not overlap: at most one holds t, in T's month or among those open now (a span touching
  // several months is in each: the others are not read).
  const month = mxMonthKey(t);
  const byDay = new Map<string, { e: MonthEntry; outstanding: number }[]>();
  for (const m of months) {
    if (m.month !== month && m.month !== OPEN_MONTH) continue;
    for (const s of m.spans) {
      if (!(s.from <= t && t < s.to)) continue;
      const e = m.entries[s.entry] as MonthEntry;
      if (client !== undefined && e.client !== client) continue;
      let open = byDay.get(m.day);
      if (!open) byDay.set(m.day, (open = []));
      open.push({ e, outstanding: s.outstanding });
    }
  }
  const days: OpenNowDay[] = [];
  const items: OpenAtInstant[] = [];
  for (const [day, open] of byDay) {
    const sums = daySums(tenant, day, t, open);
    if (sums) days.push(sums);
    for (const { e, outstanding } of open) items.push({ key: e.key, id: e.id, client: e.client, day, invoiceDate: e.date, outstanding });
  }
  return { days, items };
}
