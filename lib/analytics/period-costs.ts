/**
 * The period's costs placed on its delivered legs (lib/analytics/trip-costs.ts): the received
 * CFDIs issued in the period, not cancelled, of the cost categories, at their subtotal net of
 * discounts in MXN, less the suppliers' credit notes issued in the period on such CFDIs
 * (docs/domain.md, "Costs and margin"). Reads one cursor of compact documents and one of the
 * credit notes (folded as they arrive, so memory grows with vehicles and assigned trips, not
 * documents), the tenant-wide km per vehicle and the assigned trips' groups.
 */
import type { Db } from 'mongodb';
import type { ServiceContext } from '../context.ts';
import type { CreditNoteTaxes } from '../finance/ledger/facts.ts';
import type { ReceivedCategory } from '../model/tenant-settings.ts';
import { centsToMxnCents, mxnCents } from '../money/currency.ts';
import { toCents } from '../money/cents.ts';
import { streamCostDocs, streamCreditNoteRows, type CostDocRow } from '../received/received-assignments-repo.ts';
import { deliveredKmByVehicle, deliveredTripKeys } from './trip-audits-repo.ts';
import { addCostDoc, COST_CATEGORIES, emptyPools, isCostCategory, placeCosts, plateIndexOf, type CostPools, type PlacedCosts } from './trip-costs.ts';
import { fromMilli } from './unit-economics.ts';

/** Net of discounts, in the document's currency, then MXN at its rate (VAT is no cost: docs/domain.md). */
export const costDocNetC = (d: Pick<CostDocRow, 'subTotal' | 'discount' | 'exchangeRate'>): number =>
  mxnCents((toCents(d.subTotal) - toCents(d.discount)) / 100, d.exchangeRate);

/** A supplier's credit note as its invoice's document keeps it (a settlement): in the invoice's currency. */
export interface CreditNoteSettlement {
  /** Its Total. */
  amount: number;
  /** Its own TipoCambio, where it is in the invoice's foreign currency (else the invoice's stands). */
  exchangeRate?: number;
  /** The taxes it states itself (absent on notes recorded before they were kept). */
  taxes?: CreditNoteTaxes;
}

/**
 * What a credit note takes off the cost, MXN cents (≥ 0): its own subtotal net of discounts, its Total
 * less the VAT it transfers plus the VAT and ISR it retains (Total = SubTotal − Descuento + transferred −
 * retained), at its own rate (a note in another currency than its invoice's is kept converted at its
 * own rate: docs/domain.md "Payments, credit notes and balances"). A note recorded before its taxes
 * were kept: its Total × (SubTotal − Descuento) ÷ Total of its invoice, as the DIOT's returns.
 */
export function creditNoteNetC(invoice: { subTotal: number; discount: number; total: number; exchangeRate: number }, note: CreditNoteSettlement): number {
  const amountC = Math.max(0, toCents(note.amount));
  const totalC = toCents(invoice.total);
  const ownC = note.taxes
    ? amountC - toCents(note.taxes.vat) + toCents(note.taxes.vatRetained) + toCents(note.taxes.isrRetained)
    : totalC > 0
      ? Math.round((amountC * (toCents(invoice.subTotal) - toCents(invoice.discount))) / totalC)
      : 0;
  return centsToMxnCents(Math.max(0, ownC), note.exchangeRate ?? invoice.exchangeRate);
}

/** A credit note as the costs read it: a negative cost of its invoice's category, placed as its invoice is. */
export interface CreditNoteCost {
  /** The note's issue instant (epoch ms): the period it counts in. */
  date: number;
  category: ReceivedCategory;
  /** − creditNoteNetC. */
  netC: number;
  /** Its invoice's assignment and concepts. */
  vehicle: string | null;
  tripId: string | null;
  descriptions: string[];
}

/**
 * The tenant's suppliers' credit notes issued in [start, end] on invoices of these categories
 * (lib/received/received-assignments-repo.ts streamCreditNoteRows), each as a negative cost of its
 * invoice's category, placed as its invoice is.
 */
export async function* streamCreditNoteCosts(
  db: Db,
  tenant: string,
  q: { start: number; end: number; categories: readonly ReceivedCategory[] },
  maxTimeMS: number,
): AsyncIterable<CreditNoteCost> {
  for await (const r of streamCreditNoteRows(db, tenant, q, maxTimeMS)) {
    const a = r.a[0];
    for (const n of r.notes)
      yield {
        date: n.date,
        category: r.category,
        netC: -creditNoteNetC(r, {
          amount: n.amount,
          ...(typeof n.exchangeRate === 'number' ? { exchangeRate: n.exchangeRate } : {}),
          ...(n.taxes ? { taxes: n.taxes } : {}),
        }),
        vehicle: a?.vehicle ?? null,
        tripId: a?.tripId ?? null,
        descriptions: r.descriptions,
      };
  }
}

/** The pools placed: the assigned trips' groups and in-period km are read (by id), the spread's km is the vehicles' total. */
export async function placePeriodCosts(
  ctx: ServiceContext,
  tenant: string,
  period: { start: number; end: number },
  vehicles: readonly { vehicle: string; km: number }[],
  pools: CostPools,
): Promise<PlacedCosts> {
  const trips = await deliveredTripKeys(ctx.db, tenant, [...pools.byTrip.keys()], period, ctx.config.queryTimeoutMs);
  // Added in thousandths: the same total whatever order the vehicles come in.
  const totalKm = fromMilli(vehicles.reduce((s, v) => s + Math.round(v.km * 1000), 0));
  return placeCosts(pools, totalKm, new Map(vehicles.map((v) => [v.vehicle, v.km])), trips);
}

/** The reference: every cost document and credit note of the period read and folded. */
export async function periodCosts(ctx: ServiceContext, tenant: string, period: { start: number; end: number }): Promise<PlacedCosts> {
  const maxTimeMS = ctx.config.queryTimeoutMs;
  const vehicles = await deliveredKmByVehicle(ctx.db, tenant, period, maxTimeMS);
  // Every plate each vehicle carried in the period, not only its label (the greatest).
  const plates = plateIndexOf(vehicles);
  const pools = emptyPools();
  const q = { ...period, categories: COST_CATEGORIES };
  for await (const d of streamCostDocs(ctx.db, tenant, q, maxTimeMS)) {
    if (!isCostCategory(d.category)) continue;
    addCostDoc(pools, { category: d.category, netC: costDocNetC(d), assignedVehicle: d.vehicle, assignedTrip: d.tripId, descriptions: d.descriptions }, plates);
  }
  // A credit note lowers its invoice's category where its invoice goes, in its own period.
  for await (const n of streamCreditNoteCosts(ctx.db, tenant, q, maxTimeMS)) {
    if (!isCostCategory(n.category)) continue;
    addCostDoc(pools, { category: n.category, netC: n.netC, assignedVehicle: n.vehicle, assignedTrip: n.tripId, descriptions: n.descriptions }, plates);
  }
  return placePeriodCosts(ctx, tenant, period, vehicles, pools);
}
