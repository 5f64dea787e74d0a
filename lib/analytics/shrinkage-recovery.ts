/**
 * Shrinkage recovery (docs/domain.md "Discounts, demurrage and shrinkage
 * recovery"): the legs of the trips delivered in the period, each through
 * legShrinkage with the tenant's tolerance rules, prices and recovery mode —
 * out-of-tolerance legs, litres and the recoverable value — against what was
 * recovered: the shortage concepts on the (non-cancelled) invoice linked to
 * each trip, counted once per invoice (for the client of the linking trip with the smallest id).
 */
import type { LegProduct } from '../model/trip-document.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { isDelivered } from '../trips/delivery-state.ts';
import { legShrinkage, type LegShrinkage } from '../trips/shrinkage.ts';
import { tripOffloadDate } from './dispatch-to-bill.ts';
import { TopList, type Capped } from './report.ts';
import { ratio, roundTo, type Ratio } from './stats.ts';

/** A trip with a leg offloaded in the period, as lib/analytics/trip-audits-repo.ts returns it. */
export interface ShrinkageTrip {
  _id: string;
  client: string;
  idFinan: string | null;
  /** `unloadDate`: the delivery instant, null while the leg is in transit (legDeliveredAtExpr). */
  legs: { id: string; shipment: string; unloadDate: number | null; products: LegProduct[] }[];
  /** Linked invoice (0 or 1): cancellation and its shortage (faltante) concepts, the recovered shrinkage. */
  inv: { _id: string; cancelled: boolean; shortageC: number; shortageLines: number; shortageLitres: number }[];
}

export type ShrinkageSettings = Parameters<typeof legShrinkage>[1];

export interface ShrinkageRow {
  trips: number;
  legs: number;
  loadedLitres: number;
  offloadedLitres: number;
  /** Σ (loaded − offloaded); gains (negative shrinkage) included. */
  shrinkageLitres: number;
  legsOutOfTolerance: number;
  legsWithGain: number;
  /** Σ litres beyond each leg's tolerance. */
  excessLitres: number;
  recoverableLitres: number;
  recoverableValue: number;
  recovered: { invoices: number; lines: number; litres: number; value: number };
  /** recovered value ÷ recoverable value × 100 (2 decimals). */
  recoveryRatePct: Ratio;
  unpricedProductCodes: string[];
}

export interface WorstLeg {
  tripId: string;
  legId: string;
  shipmentId: string;
  client: string;
  offloadDate: string | null;
  loaded: number;
  offloaded: number;
  shrinkageVolume: number;
  shrinkagePercent: number;
  tolerancePct: number;
  recoverableLitres: number;
  recoverableValue: number;
  invoiceId: string | null;
}

/** The sums of a set of legs (and the recovered invoices), as a row answers them. */
export class ShrinkAcc {
  trips = 0;
  legs = 0;
  loaded = 0;
  offloaded = 0;
  shrinkage = 0;
  out = 0;
  gain = 0;
  excess = 0;
  recoverableLitres = 0;
  recoverableC = 0;
  recInvoices = 0;
  recLines = 0;
  recLitres = 0;
  recC = 0;
  unpriced = new Set<string>();

  row(): ShrinkageRow {
    return {
      trips: this.trips,
      legs: this.legs,
      loadedLitres: roundTo(this.loaded, 3),
      offloadedLitres: roundTo(this.offloaded, 3),
      shrinkageLitres: roundTo(this.shrinkage, 3),
      legsOutOfTolerance: this.out,
      legsWithGain: this.gain,
      excessLitres: roundTo(this.excess, 3),
      recoverableLitres: roundTo(this.recoverableLitres, 3),
      recoverableValue: fromCents(this.recoverableC),
      recovered: { invoices: this.recInvoices, lines: this.recLines, litres: roundTo(this.recLitres, 3), value: fromCents(this.recC) },
      recoveryRatePct: ratio(this.recC * 100, this.recoverableC, { denominatorLabel: 'recoverable shrinkage value', decimals: 2 }),
      unpricedProductCodes: [...this.unpriced].sort(),
    };
  }
}

export interface ShrinkageRecovery {
  totals: ShrinkageRow;
  byClient: (ShrinkageRow & { client: string })[];
  /** Out-of-tolerance legs, largest recoverable value first (then shrinkage %, leg id). */
  worstLegs: WorstLeg[];
}

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Largest recoverable value first, then shrinkage %, then leg id, then trip id (docs/domain.md:
 * a total order, so the list does not depend on the order the trips are read in).
 */
export const worstFirst = (a: WorstLeg, b: WorstLeg): number =>
  toCents(b.recoverableValue) - toCents(a.recoverableValue) || b.shrinkagePercent - a.shrinkagePercent || byId(a.legId, b.legId) || byId(a.tripId, b.tripId);

/** The delivered legs of a trip, each with its shrinkage under the tenant's settings. */
export function deliveredLegShrinkages(
  trip: Pick<ShrinkageTrip, 'client' | 'legs'>,
  settings: ShrinkageSettings,
): { leg: ShrinkageTrip['legs'][number] & { unloadDate: number }; s: LegShrinkage }[] {
  const out: { leg: ShrinkageTrip['legs'][number] & { unloadDate: number }; s: LegShrinkage }[] = [];
  for (const leg of trip.legs) {
    // A delivered trip's legs are all delivered (tripOffloadDate); this also narrows the type.
    if (!isDelivered(leg)) continue;
    out.push({ leg, s: legShrinkage(leg, settings, trip.client) });
  }
  return out;
}

/** A leg beyond its tolerance as worstLegs lists it (`invoiceId`: the trip's non-cancelled linked invoice). */
export function worstLegOf(
  trip: Pick<ShrinkageTrip, '_id' | 'client'>,
  leg: ShrinkageTrip['legs'][number],
  s: LegShrinkage,
  invoiceId: string | null,
): WorstLeg {
  return {
    tripId: String(trip._id),
    legId: leg.id,
    shipmentId: leg.shipment,
    client: trip.client,
    offloadDate: leg.unloadDate === null ? null : new Date(leg.unloadDate).toISOString(),
    loaded: s.loaded,
    offloaded: s.offloaded,
    shrinkageVolume: s.shrinkageVolume,
    shrinkagePercent: s.shrinkagePercent,
    tolerancePct: s.tolerancePct,
    recoverableLitres: s.recoverableLitres,
    recoverableValue: s.value,
    invoiceId,
  };
}

/** What one linked invoice recovered (its shortage concepts), credited to one client. */
export interface RecoveredLink {
  invoiceId: string;
  tripId: string;
  client: string;
  lines: number;
  litres: number;
  cents: number;
}

/**
 * The invoice's recovery is counted once in a period, for the client of the period's trip with
 * the smallest id among those linking it (docs/domain.md): `a` replaces `b` when it comes first.
 */
export const recoveredFirst = (a: RecoveredLink, b: RecoveredLink): boolean => a.tripId < b.tripId;

/** Credits `r`'s invoice to `r`'s trip unless a trip that comes first (recoveredFirst) already holds it. */
export function creditRecovered(recovered: Map<string, RecoveredLink>, r: RecoveredLink): void {
  const seen = recovered.get(r.invoiceId);
  if (!seen || recoveredFirst(r, seen)) recovered.set(r.invoiceId, r);
}

/** The trip's linked invoice as credited to the trip, when it recovers shortage (not cancelled, shortage concepts); null otherwise. */
export function recoveredLinkOf(trip: ShrinkageTrip): RecoveredLink | null {
  const link = trip.inv[0];
  if (!link || link.cancelled || link.shortageLines <= 0) return null;
  return {
    invoiceId: String(link._id),
    tripId: String(trip._id),
    client: trip.client,
    lines: link.shortageLines,
    litres: link.shortageLitres,
    cents: link.shortageC,
  };
}

/**
 * Folds the trips one at a time, in the order given (a cursor's order), so a
 * period of any size is read without holding its rows: only the per-client
 * sums, the invoices already counted and the `worstLimit` worst
 * out-of-tolerance legs (with their count) are kept.
 * Over the trips delivered in [start, end] (last leg offloaded in it); every leg of such a trip counts.
 * With `client`, only that client's trips are counted, but every trip of the period is to be
 * given: an invoice's recovery goes to the linking trip with the smallest id among all the
 * period's (as unfiltered), and counts only when that trip is the client's.
 */
export class ShrinkageRecoveryAccumulator {
  private readonly all = new ShrinkAcc();
  private readonly byClient = new Map<string, ShrinkAcc>();
  private readonly worst: TopList<WorstLeg>;
  /** Per linked invoice with shortage concepts, the trip it is credited to (recoveredFirst). */
  private readonly recovered = new Map<string, RecoveredLink>();

  constructor(
    private readonly settings: ShrinkageSettings,
    private readonly period: { start: number; end: number },
    worstLimit = Infinity,
    private readonly client?: string,
  ) {
    this.worst = new TopList(worstLimit, worstFirst);
  }

  add(trip: ShrinkageTrip): void {
    const off = tripOffloadDate({ shipments: trip.legs });
    if (off === null || off < this.period.start || off > this.period.end) return;
    this.addRecovered(trip);
    if (this.client !== undefined && trip.client !== this.client) return;
    const own = this.byClient.get(trip.client) ?? new ShrinkAcc();
    this.byClient.set(trip.client, own);
    const accs = [this.all, own];
    const link = trip.inv[0];
    const invoiceId = link && !link.cancelled ? String(link._id) : null;
    for (const a of accs) a.trips += 1;
    for (const { leg, s } of deliveredLegShrinkages(trip, this.settings)) {
      for (const a of accs) {
        a.legs += 1;
        a.loaded += s.loaded;
        a.offloaded += s.offloaded;
        a.shrinkage += s.shrinkageVolume;
        if (s.exceedsTolerance) a.out += 1;
        if (s.shrinkageVolume < 0) a.gain += 1;
        a.excess += s.excessLitres;
        a.recoverableLitres += s.recoverableLitres;
        a.recoverableC += toCents(s.value);
        for (const code of s.unpricedCodes) a.unpriced.add(code);
      }
      if (s.exceedsTolerance) this.worst.add(worstLegOf(trip, leg, s, invoiceId));
    }
  }

  /** The trip's linked invoice, when it recovers shortage: credited to this trip if it is the smallest id linking it so far. */
  private addRecovered(trip: ShrinkageTrip): void {
    const r = recoveredLinkOf(trip);
    if (r) creditRecovered(this.recovered, r);
  }

  /** worstLegs: the first `worstLimit` of them, with how many there are. */
  result(): Omit<ShrinkageRecovery, 'worstLegs'> & { worstLegs: Capped<WorstLeg> } {
    for (const r of this.recovered.values()) {
      // Credited among every client's trips; a filter by client keeps what is credited to it.
      if (this.client !== undefined && r.client !== this.client) continue;
      for (const a of [this.all, this.byClient.get(r.client)]) {
        if (!a) continue;
        a.recInvoices += 1;
        a.recLines += r.lines;
        a.recLitres += r.litres;
        a.recC += r.cents;
      }
    }
    this.recovered.clear();
    return {
      totals: this.all.row(),
      byClient: [...this.byClient.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([client, a]) => ({ client, ...a.row() })),
      worstLegs: this.worst.capped(),
    };
  }
}

/** Over the trips delivered in [start, end] (last leg offloaded in it); every leg of such a trip counts. */
export function shrinkageRecovery(trips: Iterable<ShrinkageTrip>, settings: ShrinkageSettings, period: { start: number; end: number }): ShrinkageRecovery {
  const acc = new ShrinkageRecoveryAccumulator(settings, period);
  for (const trip of trips) acc.add(trip);
  const r = acc.result();
  return { ...r, worstLegs: r.worstLegs.data };
}
