/**
 * The period's costs placed on its delivered legs (lib/analytics/trip-costs.ts): the received
 * CFDIs issued in the period, not cancelled, of the cost categories, at their subtotal net of
 * discounts in MXN (docs/domain.md, "Costs and margin"). Reads one cursor of compact documents
 * (folded as they arrive, so memory grows with vehicles and assigned trips, not documents), the
 * tenant-wide km per vehicle and the assigned trips' groups.
 */
import type { ServiceContext } from '../context.ts';
import { mxnCents } from '../money/currency.ts';
import { toCents } from '../money/cents.ts';
import { streamCostDocs, type CostDocRow } from '../received/received-assignments-repo.ts';
import { deliveredKmByVehicle, deliveredTripKeys } from './trip-audits-repo.ts';
import { addCostDoc, COST_CATEGORIES, emptyPools, isCostCategory, placeCosts, plateIndex, type CostPools, type PlacedCosts } from './trip-costs.ts';
import { fromMilli } from './unit-economics.ts';

/** Net of discounts, in the document's currency, then MXN at its rate (VAT is no cost: docs/domain.md). */
export const costDocNetC = (d: Pick<CostDocRow, 'subTotal' | 'discount' | 'exchangeRate'>): number =>
  mxnCents((toCents(d.subTotal) - toCents(d.discount)) / 100, d.exchangeRate);

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

/** The reference: every cost document of the period read and folded. */
export async function periodCosts(ctx: ServiceContext, tenant: string, period: { start: number; end: number }): Promise<PlacedCosts> {
  const maxTimeMS = ctx.config.queryTimeoutMs;
  const vehicles = await deliveredKmByVehicle(ctx.db, tenant, period, maxTimeMS);
  const plates = plateIndex(vehicles);
  const pools = emptyPools();
  for await (const d of streamCostDocs(ctx.db, tenant, { ...period, categories: COST_CATEGORIES }, maxTimeMS)) {
    if (!isCostCategory(d.category)) continue;
    addCostDoc(pools, { category: d.category, netC: costDocNetC(d), assignedVehicle: d.vehicle, assignedTrip: d.tripId, descriptions: d.descriptions }, plates);
  }
  return placePeriodCosts(ctx, tenant, period, vehicles, pools);
}
