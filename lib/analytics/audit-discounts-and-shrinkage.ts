/**
 * GET /api/analytics/discounts-and-shrinkage (domain.md "Discounts, demurrage
 * and shrinkage recovery"):
 *  - discounts: Σ Descuento ÷ Σ gross freight (freight concept amounts before
 *    discount) per client and month, non-cancelled invoices emitted in the
 *    period (summed in the database in integer cents);
 *  - demurrage (estadías) and handling (maniobras) billed per client, same invoices;
 *  - shrinkage: legs of the trips delivered in the period (last offload in
 *    it), each through legShrinkage with the tenant's tolerance rules, price
 *    per litre and recovery mode: out-of-tolerance legs, litres and the
 *    recoverable value, versus what was recovered = the shortage concepts on
 *    the (non-cancelled) invoices linked to those trips.
 */
import type { ServiceContext } from '../context.ts';
import { conceptSumsByClientMonth, type ClientMonthConceptRow } from '../db/billing-concepts-repo.ts';
import { findShrinkageRows } from '../db/fleet-repo.ts';
import { getTracedSettings, type SettingSource } from '../db/settings-source.ts';
import type { TenantSettings, ToleranceRule } from '../model/tenant-settings.ts';
import type { TripDocument } from '../model/trip-document.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { resolvePeriod } from '../shared/period.ts';
import { legShrinkage } from '../trips/shrinkage.ts';
import { tripOffloadDate } from './dispatch-to-bill.ts';
import { byString, capped, periodOut, type Capped, type PeriodOut } from './report.ts';
import { ratio, roundTo, type Ratio } from './stats.ts';

export interface DiscountsShrinkageInput {
  limit: number;
  startDate?: string;
  endDate?: string;
  client?: string;
}

export interface DiscountRow {
  documents: number;
  documentsWithDiscount: number;
  grossFreight: number;
  discounts: number;
  freightDiscounts: number;
  /** discounts ÷ grossFreight × 100 (4 decimals). */
  discountRatePct: Ratio;
}

export interface AccessorialRow {
  documents: number;
  documentsWithDemurrage: number;
  demurrage: number;
  demurrageLines: number;
  handling: number;
  handlingLines: number;
}

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

export interface DiscountsAndShrinkage {
  tenant: string;
  computedAt: string;
  period: PeriodOut;
  filters: { client: string | null };
  parameters: {
    shrinkage: {
      defaultTolerancePct: number;
      toleranceRules: ToleranceRule[];
      recoveryMode: TenantSettings['shrinkageRecoveryMode'];
      pricePerLitre: Record<string, number>;
      toleranceBasis: string;
      settingsSource: { tolerance: SettingSource; toleranceRules: SettingSource; recoveryMode: SettingSource; pricePerLitre: SettingSource };
    };
    discountRate: string;
    invoiceSelection: string;
    tripSelection: string;
    recovered: string;
  };
  discounts: { totals: DiscountRow; byClient: (DiscountRow & { client: string })[]; byClientMonth: (DiscountRow & { client: string; month: string })[] };
  demurrage: { totals: AccessorialRow; byClient: (AccessorialRow & { client: string })[] };
  shrinkage: { totals: ShrinkageRow; byClient: (ShrinkageRow & { client: string })[]; worstLegs: Capped<WorstLeg> };
}

type ConceptAcc = Omit<ClientMonthConceptRow, 'client' | 'month'>;

function addConcepts(into: ConceptAcc | undefined, r: ConceptAcc): ConceptAcc {
  if (!into) return { ...r };
  for (const k of Object.keys(r) as (keyof ConceptAcc)[]) into[k] += r[k];
  return into;
}

const discountRow = (a: ConceptAcc): DiscountRow => ({
  documents: a.documents,
  documentsWithDiscount: a.documentsWithDiscount,
  grossFreight: fromCents(a.grossFreightC),
  discounts: fromCents(a.discountC),
  freightDiscounts: fromCents(a.freightDiscountC),
  discountRatePct: ratio(a.discountC * 100, a.grossFreightC, { denominatorLabel: 'gross freight', decimals: 4 }),
});

const accessorialRow = (a: ConceptAcc): AccessorialRow => ({
  documents: a.documents,
  documentsWithDemurrage: a.documentsWithDemurrage,
  demurrage: fromCents(a.demurrageC),
  demurrageLines: a.demurrageLines,
  handling: fromCents(a.handlingC),
  handlingLines: a.handlingLines,
});

const EMPTY_CONCEPTS: ConceptAcc = {
  documents: 0, documentsWithDiscount: 0, documentsWithDemurrage: 0, grossFreightC: 0, freightDiscountC: 0, discountC: 0,
  demurrageC: 0, demurrageLines: 0, handlingC: 0, handlingLines: 0, shortageC: 0, shortageLines: 0, shortageLitres: 0,
};

class ShrinkAcc {
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

export async function auditDiscountsAndShrinkage(ctx: ServiceContext, tenant: string, input: DiscountsShrinkageInput): Promise<DiscountsAndShrinkage> {
  const now = ctx.now();
  const period = resolvePeriod(now, input.startDate, input.endDate);
  const client = input.client;
  const timeout = ctx.config.queryTimeoutMs;
  const scope = { start: period.start, end: period.end, ...(client ? { client } : {}) };
  const [{ settings, sourceOf }, conceptRows, delivered] = await Promise.all([
    getTracedSettings(ctx.db, tenant),
    conceptSumsByClientMonth(ctx.db, tenant, scope, timeout),
    findShrinkageRows(ctx.db, tenant, scope, timeout),
  ]);

  // Discounts and accessorials.
  let total: ConceptAcc = { ...EMPTY_CONCEPTS };
  const perClient = new Map<string, ConceptAcc>();
  for (const { client: c, month: _m, ...r } of conceptRows) {
    total = addConcepts(total, r);
    perClient.set(c, addConcepts(perClient.get(c), r));
  }
  const clientsSorted = [...perClient.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

  // Shrinkage of the trips delivered in the period.
  const tripsIn = delivered.filter((t) => {
    // tripOffloadDate reads only the legs' unloadDate, which the compact rows carry.
    const off = tripOffloadDate({ shipments: t.legs } as unknown as Pick<TripDocument, 'shipments'>);
    return off !== null && off >= period.start && off <= period.end;
  });
  const all = new ShrinkAcc();
  const shrinkByClient = new Map<string, ShrinkAcc>();
  const worst: WorstLeg[] = [];
  const seenInvoices = new Set<string>();
  for (const trip of tripsIn) {
    const own = shrinkByClient.get(trip.client) ?? new ShrinkAcc();
    shrinkByClient.set(trip.client, own);
    const accs = [all, own];
    const link = trip.inv[0];
    const invoiceId = link && !link.cancelled ? String(link._id) : null;
    for (const a of accs) a.trips += 1;
    for (const leg of trip.legs) {
      const s = legShrinkage(leg, settings, trip.client);
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
      if (s.exceedsTolerance) {
        worst.push({
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
        });
      }
    }
    if (link && !link.cancelled && !seenInvoices.has(String(link._id))) {
      seenInvoices.add(String(link._id));
      for (const a of accs) {
        if (link.shortageLines > 0) a.recInvoices += 1;
        a.recLines += link.shortageLines;
        a.recLitres += link.shortageLitres;
        a.recC += link.shortageC;
      }
    }
  }
  worst.sort((a, b) => toCents(b.recoverableValue) - toCents(a.recoverableValue) || b.shrinkagePercent - a.shrinkagePercent || (a.legId < b.legId ? -1 : 1));

  return {
    tenant,
    computedAt: now.toISOString(),
    period: periodOut(period),
    filters: { client: client ?? null },
    parameters: {
      shrinkage: {
        defaultTolerancePct: settings.shrinkageTolerancePct,
        toleranceRules: settings.toleranceRules,
        recoveryMode: settings.shrinkageRecoveryMode,
        pricePerLitre: settings.pricePerLitre,
        toleranceBasis: 'Percent of loaded litres; most specific rule wins (client+product, client, product, tenant default); a multi-product leg uses the loaded-weighted mean. A leg exceeds its tolerance when shrinkage % > tolerance (strictly).',
        settingsSource: {
          tolerance: sourceOf('shrinkageTolerancePct'),
          toleranceRules: sourceOf('toleranceRules'),
          recoveryMode: sourceOf('shrinkageRecoveryMode'),
          pricePerLitre: sourceOf('pricePerLitre'),
        },
      },
      discountRate: 'Σ Descuento ÷ Σ gross freight (freight concept amounts before discount) × 100.',
      invoiceSelection: 'Non-cancelled invoices emitted in the period (Mexico City days).',
      tripSelection: 'Trips whose last leg was offloaded in the period; every leg of such a trip counts.',
      recovered: 'Shortage concepts (ObjetoImp 01) on the non-cancelled invoices linked (idFinan) to those trips; litres = concept quantity.',
    },
    discounts: {
      totals: discountRow(total),
      byClient: clientsSorted.map(([c, a]) => ({ client: c, ...discountRow(a) })),
      byClientMonth: [...conceptRows]
        .sort((a, b) => byString<ClientMonthConceptRow>((r) => `${r.client}|${r.month}`)(a, b))
        .map(({ client: c, month, ...r }) => ({ client: c, month, ...discountRow(r) })),
    },
    demurrage: {
      totals: accessorialRow(total),
      byClient: clientsSorted.map(([c, a]) => ({ client: c, ...accessorialRow(a) })),
    },
    shrinkage: {
      totals: all.row(),
      byClient: [...shrinkByClient.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([c, a]) => ({ client: c, ...a.row() })),
      worstLegs: capped(worst, input.limit),
    },
  };
}
