/**
 * Dispatch-to-bill's days kept on write (docs/rollups.md "Dispatch-to-bill"): what one Mexico
 * City day adds to the audit, computed from the trips with a leg unloaded on it, and how a
 * period's days add up to the same answer as folding every trip of the period
 * (DispatchToBillAccumulator).
 *
 * A delivered trip counts on the day of its delivery (last leg's offload) alone: the audit takes
 * it exactly when that instant is in the period. A trip in transit counts once in a period in
 * which one of its legs' stored unload instants falls: it is kept on each such day with the
 * previous such day (`nd`), and a period counts it on the first of its days inside it, the one
 * whose previous day is before the period (or none). Lags are kept in milliseconds (invoice
 * instant − delivery instant, integers), so lagDays = ms / 86,400,000 is the very number the
 * documents give and medians and p90s stay exact; amounts in integer cents.
 */
import { fromCents } from '../money/cents.ts';
import { MS_PER_DAY, mxDateString } from '../time/mexico-city.ts';
import {
  classifyDelivery,
  lagSummary,
  mostNegativeFirst,
  tripOffloadDate,
  type DeliveryRow,
  type DispatchToBillSummary,
  type TripLag,
  type UnbilledTrip,
} from './dispatch-to-bill.ts';
import { roundTo } from './stats.ts';

/** Bump whenever what a day holds or how it is computed changes: a store of another version is rebuilt. */
export const DISPATCH_TO_BILL_ROLLUP_VERSION = 2;

/** Trips per kept document: a day with more is split into parts (a part stays under ~200 KB). */
export const TRIPS_PER_PART = 2000;

/** A delivery row with each leg's stored unload instant (trip-audits-repo.ts streamStoredDeliveryRows). */
export interface StoredDeliveryRow extends DeliveryRow {
  unloads: unknown[];
}

/** What a day holds of one client's trips. */
export interface DispatchToBillGroup {
  c: string;
  /** Delivered and billed (valid linked invoice): lag in ms, invoice − delivery. */
  lags: number[];
  /** The pre-billed among them (lag ≤ 0): trip id and lag in ms. */
  pre: { t: string; l: number }[];
  /** Delivered without a valid invoice: count, value in cents, of which no link / a cancelled link. */
  u: number;
  uC: number;
  nl: number;
  cl: number;
  /** Delivered, linked to a document the tenant does not have: count, value in cents. */
  r: number;
  rC: number;
  /** In transit with a leg unloaded on this day: per trip, the previous day one of its legs was unloaded ('' when none). */
  nd: string[];
}

export interface DispatchToBillDayPart {
  /** `${tenant}|${day}|${part}`. */
  _id: string;
  tenant: string;
  day: string;
  part: number;
  version: number;
  /** By client, in client order. */
  groups: DispatchToBillGroup[];
}

/** A delivered trip without a valid invoice, as the report lists it (dispatchToBillUnbilled). */
export interface UnbilledEntry {
  /** `${tenant}|${tripId}`. */
  _id: string;
  tenant: string;
  day: string;
  offload: number;
  tripId: string;
  client: string;
  valueC: number;
  reason: UnbilledTrip['reason'];
  idFinan: string | null;
}

export const dispatchToBillPartId = (tenant: string, day: string, part: number): string => `${tenant}|${day}|${part}`;

type Contribution =
  | { kind: 'billed'; client: string; tripId: string; lagMs: number }
  | { kind: 'unbilled'; client: string; valueC: number; link: 'none' | 'cancelled' }
  | { kind: 'unresolved'; client: string; valueC: number }
  | { kind: 'inTransit'; client: string; prev: string };

const emptyGroup = (c: string): DispatchToBillGroup => ({ c, lags: [], pre: [], u: 0, uC: 0, nl: 0, cl: 0, r: 0, rC: 0, nd: [] });

function groupsOf(contributions: readonly Contribution[]): DispatchToBillGroup[] {
  const byClient = new Map<string, DispatchToBillGroup>();
  for (const x of contributions) {
    let g = byClient.get(x.client);
    if (!g) byClient.set(x.client, (g = emptyGroup(x.client)));
    if (x.kind === 'billed') {
      g.lags.push(x.lagMs);
      if (x.lagMs <= 0) g.pre.push({ t: x.tripId, l: x.lagMs });
    } else if (x.kind === 'unbilled') {
      g.u += 1;
      g.uC += x.valueC;
      if (x.link === 'none') g.nl += 1;
      else g.cl += 1;
    } else if (x.kind === 'unresolved') {
      g.r += 1;
      g.rC += x.valueC;
    } else g.nd.push(x.prev);
  }
  return [...byClient.values()].sort((a, b) => (a.c < b.c ? -1 : a.c > b.c ? 1 : 0));
}

const EVERYTHING = { start: -Infinity, end: Infinity };

/** The distinct Mexico City days of the stored unload instants (numbers only, as the audit's range query matches), in order. */
function unloadDays(unloads: readonly unknown[]): string[] {
  const days = new Set<string>();
  for (const u of unloads) if (typeof u === 'number' && Number.isFinite(u)) days.add(mxDateString(u));
  return [...days].sort();
}

/**
 * The kept form of these days of a tenant from the trips with a leg unloaded on one of them
 * (each with its linked invoice, as the audit reads it): the day parts (a day nothing counts on
 * has none) and the unbilled trips delivered on them. Deterministic: trips in id order.
 */
export function rollUpDispatchToBillDays(
  tenant: string,
  days: readonly string[],
  rows: readonly StoredDeliveryRow[],
): { parts: DispatchToBillDayPart[]; unbilled: UnbilledEntry[] } {
  const wanted = new Set(days);
  const byDay = new Map<string, Contribution[]>();
  const add = (day: string, x: Contribution): void => {
    let list = byDay.get(day);
    if (!list) byDay.set(day, (list = []));
    list.push(x);
  };
  const unbilled: UnbilledEntry[] = [];
  const sorted = [...rows].sort((a, b) => (String(a._id) < String(b._id) ? -1 : String(a._id) > String(b._id) ? 1 : 0));
  for (const row of sorted) {
    const c = classifyDelivery(row, EVERYTHING, 0);
    if (c.kind === 'out') continue; // never with an unbounded period
    const tripId = String(row._id);
    if (c.kind === 'row' && c.link === null) {
      // In transit: on each day a leg was unloaded, with the day before it.
      const ud = unloadDays(row.unloads);
      ud.forEach((day, i) => {
        if (wanted.has(day)) add(day, { kind: 'inTransit', client: row.client, prev: ud[i - 1] ?? '' });
      });
      continue;
    }
    const offload = tripOffloadDate({ shipments: row.legs }) as number;
    const day = mxDateString(offload);
    if (!wanted.has(day)) continue;
    if (c.kind === 'unresolved') add(day, { kind: 'unresolved', client: row.client, valueC: c.valueC });
    else if (c.link === 'valid') add(day, { kind: 'billed', client: row.client, tripId, lagMs: (c.row.invoiceDate as number) - offload });
    else {
      const valueC = row.legs.reduce((s, l) => s + l.totalFreightC, 0);
      add(day, { kind: 'unbilled', client: row.client, valueC, link: c.link === 'cancelled' ? 'cancelled' : 'none' });
      unbilled.push({
        _id: `${tenant}|${tripId}`,
        tenant,
        day,
        offload,
        tripId,
        client: row.client,
        valueC,
        reason: c.link === 'cancelled' ? 'linked invoice cancelled' : 'no invoice linked',
        idFinan: row.idFinan ?? null,
      });
    }
  }
  const parts: DispatchToBillDayPart[] = [];
  for (const day of [...byDay.keys()].sort()) {
    const list = byDay.get(day) as Contribution[];
    for (let part = 0; part * TRIPS_PER_PART < list.length; part += 1)
      parts.push({
        _id: dispatchToBillPartId(tenant, day, part),
        tenant,
        day,
        part,
        version: DISPATCH_TO_BILL_ROLLUP_VERSION,
        groups: groupsOf(list.slice(part * TRIPS_PER_PART, (part + 1) * TRIPS_PER_PART)),
      });
  }
  return { parts, unbilled };
}

/** What a period's kept days add up to: the audit's result but the unbilled trips' list (read from its index). */
export interface FoldedDispatchToBill {
  summary: DispatchToBillSummary;
  byClient: { client: string; summary: DispatchToBillSummary }[];
  /** Every pre-billed trip of the period, most negative first. */
  preBilled: TripLag[];
  unbilledTotal: number;
  noLink: number;
  cancelledLink: number;
  unresolved: { count: number; value: number };
}

interface Sums {
  lags: number[];
  pre: { t: string; l: number }[];
  delivered: number;
  unbilledCount: number;
  unbilledC: number;
  notDelivered: number;
}

const emptySums = (): Sums => ({ lags: [], pre: [], delivered: 0, unbilledCount: 0, unbilledC: 0, notDelivered: 0 });

/**
 * Adds the kept days of a period (every part of the days from `fromDay` on, as read) for one
 * client or all: the same figures as folding the period's trips (the trips in transit counted on
 * the first of their unload days inside the period).
 */
export function foldDispatchToBillDays(parts: Iterable<DispatchToBillDayPart>, fromDay: string, client?: string): FoldedDispatchToBill {
  const all = emptySums();
  const byClient = new Map<string, Sums>();
  let noLink = 0;
  let cancelledLink = 0;
  let unresolved = 0;
  let unresolvedC = 0;
  for (const p of parts)
    for (const g of p.groups) {
      if (client !== undefined && g.c !== client) continue;
      noLink += g.nl;
      cancelledLink += g.cl;
      unresolved += g.r;
      unresolvedC += g.rC;
      const notDelivered = g.nd.filter((prev) => prev < fromDay).length;
      const rows = g.lags.length + g.u + notDelivered;
      if (rows === 0) continue; // unresolved trips only: not a row of the audit
      let own = byClient.get(g.c);
      if (!own) byClient.set(g.c, (own = emptySums()));
      for (const s of [all, own]) {
        for (const l of g.lags) s.lags.push(l / MS_PER_DAY);
        s.delivered += g.lags.length + g.u;
        s.unbilledCount += g.u;
        s.unbilledC += g.uC;
        s.notDelivered += notDelivered;
      }
      own.pre.push(...g.pre);
    }
  const summaryOf = (s: Sums): DispatchToBillSummary =>
    lagSummary(s.lags, { delivered: s.delivered, unbilledCount: s.unbilledCount, unbilledC: s.unbilledC, notDelivered: s.notDelivered });
  const preBilled: TripLag[] = [];
  for (const [c, s] of byClient)
    for (const x of s.pre) {
      const lag = x.l / MS_PER_DAY;
      preBilled.push({ tripId: x.t, client: c, lagDays: roundTo(lag, 2), preBilled: true });
    }
  preBilled.sort(mostNegativeFirst);
  return {
    summary: summaryOf(all),
    byClient: [...byClient.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([c, s]) => ({ client: c, summary: summaryOf(s) })),
    preBilled,
    unbilledTotal: all.unbilledCount,
    noLink,
    cancelledLink,
    unresolved: { count: unresolved, value: fromCents(unresolvedC) },
  };
}

/** An unbilled trip as the report lists it, as of `now`. */
export const unbilledTrip = (e: UnbilledEntry, now: number): UnbilledTrip => ({
  tripId: e.tripId,
  client: e.client,
  offloadDate: new Date(e.offload).toISOString(),
  daysSinceOffload: roundTo((now - e.offload) / MS_PER_DAY, 2),
  value: fromCents(e.valueC),
  reason: e.reason,
  idFinan: e.idFinan,
});
