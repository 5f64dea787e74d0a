/**
 * The sums of the invoices open now (docs/rollups.md "Receivables"): per tenant and Mexico City
 * invoice day, per client, the open-items entries still open (`to` = OPEN_END) counted with the
 * outstanding MXN cents of their last span. From the latest instant any of them changed (the
 * `horizon`: its last span's start) on, and when no entry closes after the instant asked for,
 * they are the invoices open then with their balances, so an as-of report of now folds a few
 * groups per day instead of every open invoice. Due and expected days come from the invoice day
 * and the client's credit days and payment delay when read: nothing kept depends on a setting.
 */
import { fromCents, toCents } from '../money/cents.ts';
import { mxAddDays, mxDateString } from '../time/mexico-city.ts';
import { bucketEnd, delayFor, forecastClientRows, type ClientReceivables, type PaymentDelays } from './forecast.ts';
import { itemOutstandingAt, OPEN_END, type OpenItem } from './open-items.ts';

export interface OpenNowGroup {
  client: string;
  /** Entries open now. */
  n: number;
  /** Of them, those owing at least a cent in MXN (the forecast's items; aging counts every one). */
  nPos: number;
  /** Their outstanding MXN, in cents (each entry's balance rounded to the cent, as the reports add them). */
  cents: number;
  /** The latest of them (invoice instant, then id) and its client name: aging names a client after it. */
  lastDate: number;
  lastId: string;
  lastName: string;
  /** The least id of those owing a cent and its client name (the forecast names a client after its first item: day, then id); null: none. */
  firstId: string | null;
  firstName: string | null;
}

export interface OpenNowDay {
  /** `${tenant}|${day}`. */
  _id: string;
  tenant: string;
  /** Mexico City day of the invoices. */
  day: string;
  /** The latest instant a balance of these entries changed (the greatest start of a last span): the sums hold from it on. */
  horizon: number;
  /** By client. */
  groups: OpenNowGroup[];
}

export const openNowDayId = (tenant: string, day: string): string => `${tenant}|${day}`;

/** An entry open at some instant with its balance then (an OpenItem's fields the sums read). */
interface OpenAt {
  e: Pick<OpenItem, 'id' | 'client' | 'clientName' | 'date'>;
  outstanding: number;
}

/** A day's sums of its entries open at some instant (`horizon`: from when they hold); null when none is. */
export function daySums(tenant: string, day: string, horizon: number, open: Iterable<OpenAt>): OpenNowDay | null {
  const groups = new Map<string, OpenNowGroup>();
  for (const { e, outstanding } of open) {
    const cents = toCents(outstanding);
    let g = groups.get(e.client);
    if (!g) {
      g = { client: e.client, n: 0, nPos: 0, cents: 0, lastDate: e.date, lastId: e.id, lastName: e.clientName, firstId: null, firstName: null };
      groups.set(e.client, g);
    }
    g.n += 1;
    g.cents += cents;
    if (e.date > g.lastDate || (e.date === g.lastDate && e.id > g.lastId)) {
      g.lastDate = e.date;
      g.lastId = e.id;
      g.lastName = e.clientName;
    }
    if (cents > 0) {
      g.nPos += 1;
      if (g.firstId === null || e.id < g.firstId) {
        g.firstId = e.id;
        g.firstName = e.clientName;
      }
    }
  }
  if (!groups.size) return null;
  return {
    _id: openNowDayId(tenant, day),
    tenant,
    day,
    horizon,
    groups: [...groups.values()].sort((a, b) => (a.client < b.client ? -1 : a.client > b.client ? 1 : 0)),
  };
}

/** The day's sums from the entries of the invoices emitted on it (those no longer open are left out); null when none is open now. */
export function openNowDayOf(tenant: string, day: string, entries: readonly OpenItem[]): OpenNowDay | null {
  const open: OpenAt[] = [];
  let horizon = -Infinity;
  for (const e of entries) {
    const last = e.spans[e.spans.length - 1];
    if (e.day !== day || e.to !== OPEN_END || !last) continue;
    horizon = Math.max(horizon, last.from);
    open.push({ e, outstanding: last.outstanding });
  }
  return daySums(tenant, day, horizon, open);
}

/** The same sums of a day's entries open at instant `t` with their balance then (a day whose kept sums do not hold at t); horizon t. */
export function openDayAt(
  tenant: string,
  day: string,
  entries: readonly Pick<OpenItem, 'id' | 'client' | 'clientName' | 'date' | 'day' | 'spans'>[],
  t: number,
): OpenNowDay | null {
  const open: OpenAt[] = [];
  for (const e of entries) {
    const outstanding = e.day === day ? itemOutstandingAt(e, t) : null;
    if (outstanding !== null) open.push({ e, outstanding });
  }
  return daySums(tenant, day, t, open);
}

/** The least offset in days, over the clients of the sums, from an invoice day to the day an item ranks by (the item reader's stop). */
export function minOffsetDays(days: readonly OpenNowDay[], client: string | undefined, offset: (client: string) => number): number {
  let min = Infinity;
  for (const d of days) for (const g of d.groups) if (client === undefined || g.client === client) min = Math.min(min, offset(g.client));
  return min;
}

/** The forecast's figures of the open invoices from the sums (what forecastInflows and clientReceivables give for every item). */
export interface OpenNowForecast {
  openInvoices: number;
  totalExpectedC: number;
  overdue: { expected: number; invoices: number; oldestExpectedDate: string | null };
  buckets: { key: string; start: string; end: string; expected: number; invoices: number }[];
  receivables: ClientReceivables;
}

export interface ForecastTerms {
  creditDaysDefault: number;
  creditDaysByClient: Readonly<Record<string, number>>;
}

/**
 * Each group's invoices are due on day + the client's credit days and expected on that due day +
 * its rounded payment delay; folded as forecastInflows buckets and clientReceivables sums their
 * items, in integer cents: the same figures to the cent and the count.
 */
export function forecastOpenNow(
  days: readonly OpenNowDay[],
  client: string | undefined,
  terms: ForecastTerms,
  delays: PaymentDelays,
  asOf: number,
  bucket: 'week' | 'month',
): OpenNowForecast {
  const asOfDay = mxDateString(asOf);
  const creditDays = (c: string): number => terms.creditDaysByClient[c] ?? terms.creditDaysDefault;
  const byExpected = new Map<string, { n: number; c: number }>();
  const clients = new Map<string, { name: string; nameDay: string; nameId: string; n: number; outC: number; pastDueC: number; next: string | null }>();
  let totalC = 0;
  let pastDueC = 0;
  let pastDueN = 0;
  let n = 0;
  for (const d of days)
    for (const g of d.groups) {
      if ((client !== undefined && g.client !== client) || g.nPos === 0 || g.firstId === null) continue;
      const dueDate = mxAddDays(d.day, Math.round(creditDays(g.client)));
      const expectedDate = mxAddDays(dueDate, Math.round(delayFor(delays, g.client).delayDays) + 0);
      const e = byExpected.get(expectedDate) ?? { n: 0, c: 0 };
      e.n += g.nPos;
      e.c += g.cents;
      byExpected.set(expectedDate, e);
      n += g.nPos;
      totalC += g.cents;
      let c = clients.get(g.client);
      if (!c) clients.set(g.client, (c = { name: g.firstName ?? '', nameDay: d.day, nameId: g.firstId, n: 0, outC: 0, pastDueC: 0, next: null }));
      if (d.day < c.nameDay || (d.day === c.nameDay && g.firstId < c.nameId)) {
        c.name = g.firstName ?? '';
        c.nameDay = d.day;
        c.nameId = g.firstId;
      }
      c.n += g.nPos;
      c.outC += g.cents;
      if (dueDate < asOfDay) {
        c.pastDueC += g.cents;
        pastDueC += g.cents;
        pastDueN += g.nPos;
      } else if (c.next === null || expectedDate < c.next) c.next = expectedDate;
    }
  const expectedDays = [...byExpected.keys()].sort();
  const overdueDays = expectedDays.filter((x) => x < asOfDay);
  const futureDays = expectedDays.filter((x) => x >= asOfDay);
  const sumOf = (list: string[]): { n: number; c: number } =>
    list.reduce(
      (s, x) => {
        const e = byExpected.get(x) as { n: number; c: number };
        return { n: s.n + e.n, c: s.c + e.c };
      },
      { n: 0, c: 0 },
    );
  const lastDay = futureDays[futureDays.length - 1] ?? asOfDay;
  const buckets: OpenNowForecast['buckets'] = [];
  for (let start = asOfDay; start <= lastDay;) {
    const end = bucketEnd(start, bucket);
    const inside = sumOf(futureDays.filter((x) => x >= start && x <= end));
    buckets.push({ key: bucket === 'month' ? start.slice(0, 7) : start, start, end, expected: fromCents(inside.c), invoices: inside.n });
    start = mxAddDays(end, 1);
  }
  const overdue = sumOf(overdueDays);
  const rows = forecastClientRows(clients, terms, delays);
  return {
    openInvoices: n,
    totalExpectedC: totalC,
    overdue: { expected: fromCents(overdue.c), invoices: overdue.n, oldestExpectedDate: overdueDays[0] ?? null },
    buckets,
    receivables: {
      clients: rows,
      pastDue: { invoices: pastDueN, amount: fromCents(pastDueC) },
      notYetDue: { invoices: n - pastDueN, amount: fromCents(totalC - pastDueC) },
      outstanding: fromCents(totalC),
    },
  };
}
