/**
 * Shrinkage recovery's days kept on write (docs/rollups.md "Discounts and shrinkage"): per tenant
 * and Mexico City **delivery day** (the day of a trip's last delivery, the instant the report's
 * period is judged by: tripOffloadDate), the sums of the trips delivered that day per client in
 * integer millilitres and cents, the recovering invoices linked to them, and the legs beyond
 * their tolerance (the findings, kept one document each). What a leg counts depends on the
 * tenant's tolerance rules, prices and recovery mode: a day holds the fingerprint of the
 * settings it was computed under and is recomputed when read under others.
 */
import { createHash } from 'node:crypto';
import type { TenantSettings } from '../model/tenant-settings.ts';
import { toCents } from '../money/cents.ts';
import { mxDateString } from '../time/mexico-city.ts';
import { tripOffloadDate } from './dispatch-to-bill.ts';
import {
  deliveredLegShrinkages,
  creditRecovered,
  recoveredLinkOf,
  ShrinkAcc,
  worstLegOf,
  type RecoveredLink,
  type ShrinkageRecovery,
  type ShrinkageSettings,
  type ShrinkageTrip,
  type WorstLeg,
} from './shrinkage-recovery.ts';

/**
 * Bump whenever what a day (of either part: lib/analytics/discount-days.ts too) holds or how it is computed changes
 * (3: a leg's recoverable value at the exact loaded-weighted price, not the price rounded to 4 decimals).
 */
export const DISCOUNTS_SHRINKAGE_ROLLUP_VERSION = 3;

/** The settings a day's shrinkage depends on, with the version: a day kept under another fingerprint is stale. */
export function shrinkageFingerprint(
  settings: Pick<TenantSettings, 'shrinkageTolerancePct' | 'toleranceRules' | 'pricePerLitre' | 'shrinkageRecoveryMode'>,
): string {
  const prices = Object.entries(settings.pricePerLitre).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const basis = JSON.stringify([settings.shrinkageTolerancePct, settings.toleranceRules, prices, settings.shrinkageRecoveryMode]);
  return `v${DISCOUNTS_SHRINKAGE_ROLLUP_VERSION}|${createHash('sha256').update(basis).digest('hex').slice(0, 24)}`;
}

/** One client's trips delivered on a day: litres in integer millilitres (each leg's figure is to the millilitre), money in cents. */
export interface ShrinkageDaySums {
  client: string;
  trips: number;
  legs: number;
  loadedMl: number;
  offloadedMl: number;
  shrinkageMl: number;
  out: number;
  gain: number;
  excessMl: number;
  recoverableMl: number;
  recoverableC: number;
  unpriced: string[];
}

export interface KeptShrinkageDay {
  /** `${tenant}|${day}`. */
  _id: string;
  tenant: string;
  day: string;
  fingerprint: string;
  clients: ShrinkageDaySums[];
  /** Per linked invoice with shortage concepts, the day's trip it is credited to (recoveredFirst). */
  recovered: RecoveredLink[];
}

/** A leg beyond its tolerance, with the keys of the worst-first order (worstFirst). */
export interface ShrinkageFinding {
  /** `${tenant}|${day}|${tripId}|${legIndex}`. */
  _id: string;
  tenant: string;
  day: string;
  client: string;
  fingerprint: string;
  /** Recoverable value in cents (descending), shrinkage % (descending), leg id, trip id. */
  valueC: number;
  pct: number;
  legId: string;
  tripId: string;
  leg: WorstLeg;
}

export const shrinkageDayId = (tenant: string, day: string): string => `${tenant}|${day}`;

const ml = (litres: number): number => Math.round(litres * 1000);
const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

type DayAcc = { clients: Map<string, ShrinkageDaySums & { codes: Set<string> }>; recovered: Map<string, RecoveredLink> };

/**
 * The kept form of some days folded one trip at a time (the trips with a leg offloaded in them,
 * streamShrinkageRows over the days' range): each trip counts on its delivery day, when that day
 * is one of `days`. Only the days' sums are held; the findings wait in `pending` until the caller
 * takes them (takeFindings), so a run's trips are never held together.
 */
export class ShrinkageDaysAccumulator {
  private readonly wanted: ReadonlySet<string>;
  private readonly fingerprint: string;
  private readonly byDay = new Map<string, DayAcc>();
  private pending: ShrinkageFinding[] = [];

  constructor(
    private readonly tenant: string,
    days: readonly string[],
    private readonly settings: ShrinkageSettings & Parameters<typeof shrinkageFingerprint>[0],
  ) {
    this.wanted = new Set(days);
    this.fingerprint = shrinkageFingerprint(settings);
  }

  /** How many findings wait to be taken. */
  get pendingFindings(): number {
    return this.pending.length;
  }

  /** The findings folded since the last call. */
  takeFindings(): ShrinkageFinding[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }

  add(trip: ShrinkageTrip): void {
    const { tenant, settings, fingerprint } = this;
    const off = tripOffloadDate({ shipments: trip.legs });
    if (off === null) return;
    const day = mxDateString(off);
    if (!this.wanted.has(day)) return;
    let kept = this.byDay.get(day);
    if (!kept) this.byDay.set(day, (kept = { clients: new Map(), recovered: new Map() }));
    let sums = kept.clients.get(trip.client);
    if (!sums) {
      sums = {
        client: trip.client,
        trips: 0,
        legs: 0,
        loadedMl: 0,
        offloadedMl: 0,
        shrinkageMl: 0,
        out: 0,
        gain: 0,
        excessMl: 0,
        recoverableMl: 0,
        recoverableC: 0,
        unpriced: [],
        codes: new Set(),
      };
      kept.clients.set(trip.client, sums);
    }
    const link = trip.inv[0];
    const invoiceId = link && !link.cancelled ? String(link._id) : null;
    sums.trips += 1;
    deliveredLegShrinkages(trip, settings).forEach(({ leg, s }, i) => {
      sums.legs += 1;
      sums.loadedMl += ml(s.loaded);
      sums.offloadedMl += ml(s.offloaded);
      sums.shrinkageMl += ml(s.shrinkageVolume);
      if (s.exceedsTolerance) sums.out += 1;
      if (s.shrinkageVolume < 0) sums.gain += 1;
      sums.excessMl += ml(s.excessLitres);
      sums.recoverableMl += ml(s.recoverableLitres);
      sums.recoverableC += toCents(s.value);
      for (const code of s.unpricedCodes) sums.codes.add(code);
      if (s.exceedsTolerance) {
        const w = worstLegOf(trip, leg, s, invoiceId);
        this.pending.push({
          _id: `${tenant}|${day}|${w.tripId}|${i}`,
          tenant,
          day,
          client: trip.client,
          fingerprint,
          valueC: toCents(w.recoverableValue),
          pct: w.shrinkagePercent,
          legId: w.legId,
          tripId: w.tripId,
          leg: w,
        });
      }
    });
    const r = recoveredLinkOf(trip);
    if (r) creditRecovered(kept.recovered, r);
  }

  /** The kept days folded so far (a day without a delivered trip: absent), in day order. */
  days(): KeptShrinkageDay[] {
    return [...this.byDay.entries()]
      .sort(([a], [b]) => byString(a, b))
      .map(([day, k]) => ({
        _id: shrinkageDayId(this.tenant, day),
        tenant: this.tenant,
        day,
        fingerprint: this.fingerprint,
        clients: [...k.clients.values()].sort((a, b) => byString(a.client, b.client)).map(({ codes, ...c }) => ({ ...c, unpriced: [...codes].sort() })),
        recovered: [...k.recovered.values()].sort((a, b) => byString(a.invoiceId, b.invoiceId)),
      }));
  }
}

/** The kept form of these days from these trips, held (ShrinkageDaysAccumulator over a list): findings in _id order. */
export function rollUpShrinkageDays(
  tenant: string,
  days: readonly string[],
  rows: Iterable<ShrinkageTrip>,
  settings: ShrinkageSettings & Parameters<typeof shrinkageFingerprint>[0],
): { days: KeptShrinkageDay[]; findings: ShrinkageFinding[] } {
  const acc = new ShrinkageDaysAccumulator(tenant, days, settings);
  for (const trip of rows) acc.add(trip);
  return { days: acc.days(), findings: acc.takeFindings().sort((a, b) => byString(a._id, b._id)) };
}

/**
 * The report's totals and clients from kept days (one client when `client` is given): the same
 * figures as folding the trips (ShrinkageRecoveryAccumulator), and how many legs are beyond
 * their tolerance (the findings' total). An invoice's recovery goes to the smallest linking trip
 * id over every client's entries, then counts for `client` only when credited to it: the
 * filtered figures are the client's row of the unfiltered answer.
 */
export function foldShrinkageDays(
  days: Iterable<Pick<KeptShrinkageDay, 'clients' | 'recovered'>>,
  client?: string,
): Omit<ShrinkageRecovery, 'worstLegs'> & { outOfTolerance: number } {
  const all = new ShrinkAcc();
  const byClient = new Map<string, ShrinkAcc>();
  const recovered = new Map<string, RecoveredLink>();
  type Milli = [number, number, number, number, number];
  const milli = { all: [0, 0, 0, 0, 0] as Milli, byClient: new Map<string, Milli>() };
  for (const day of days) {
    for (const c of day.clients) {
      if (client !== undefined && c.client !== client) continue;
      let own = byClient.get(c.client);
      if (!own) byClient.set(c.client, (own = new ShrinkAcc()));
      let m = milli.byClient.get(c.client);
      if (!m) milli.byClient.set(c.client, (m = [0, 0, 0, 0, 0]));
      for (const a of [all, own]) {
        a.trips += c.trips;
        a.legs += c.legs;
        a.out += c.out;
        a.gain += c.gain;
        a.recoverableC += c.recoverableC;
        for (const code of c.unpriced) a.unpriced.add(code);
      }
      for (const s of [milli.all, m]) {
        s[0] += c.loadedMl;
        s[1] += c.offloadedMl;
        s[2] += c.shrinkageMl;
        s[3] += c.excessMl;
        s[4] += c.recoverableMl;
      }
    }
    // Every client's recovering invoices: the smallest linking trip id is chosen among all of them (as unfiltered).
    for (const r of day.recovered) creditRecovered(recovered, r);
  }
  // Exact sums in millilitres, answered in litres (each leg's figure is to the millilitre).
  const litres = (a: ShrinkAcc, m: Milli): void => {
    [a.loaded, a.offloaded, a.shrinkage, a.excess, a.recoverableLitres] = m.map((x) => x / 1000) as Milli;
  };
  litres(all, milli.all);
  for (const [c, a] of byClient) litres(a, milli.byClient.get(c) ?? [0, 0, 0, 0, 0]);
  for (const r of recovered.values()) {
    // A filter by client keeps what is credited to that client.
    if (client !== undefined && r.client !== client) continue;
    for (const a of [all, byClient.get(r.client)]) {
      if (!a) continue;
      a.recInvoices += 1;
      a.recLines += r.lines;
      a.recLitres += r.litres;
      a.recC += r.cents;
    }
  }
  return {
    totals: all.row(),
    byClient: [...byClient.entries()].sort(([a], [b]) => byString(a, b)).map(([c, a]) => ({ client: c, ...a.row() })),
    outOfTolerance: all.out,
  };
}
