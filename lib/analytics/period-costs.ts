/**
 * The period's costs placed on its delivered legs (lib/analytics/trip-costs.ts): the received
 * CFDIs issued in the period, not cancelled, of the cost categories, at their subtotal net of
 * discounts in MXN, less the suppliers' credit notes issued in the period on such CFDIs
 * (docs/domain.md, "Costs and margin"). Reads one cursor of compact documents and one of the
 * credit notes (folded as they arrive, so memory grows with vehicles and assigned trips, not
 * documents), the tenant-wide km per vehicle and the assigned trips' groups.
 */
import type { Db, Document } from 'mongodb';
import type { ServiceContext } from '../context.ts';
import { COLLECTIONS } from '../db/collections.ts';
import { AUDIT_BATCH_SIZE } from '../db/pipeline.ts';
import type { CreditNoteTaxes } from '../finance/ledger/facts.ts';
import type { ReceivedCategory } from '../model/tenant-settings.ts';
import { centsToMxnCents, mxnCents } from '../money/currency.ts';
import { toCents } from '../money/cents.ts';
import { streamCostDocs, type CostDocRow } from '../received/received-assignments-repo.ts';
import { receivedDocs } from '../received/received-repo.ts';
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
 * The tenant's suppliers' credit notes (a received CFDI's settlements of kind `creditNote`, not
 * cancelled) issued in [start, end] on invoices of these categories that are not cancelled, each
 * with its invoice's category, concepts and assignment, as they arrive (index tenant_settlement_date).
 * The import takes a received note relating exactly one invoice (TipoRelacion 01): each is its
 * invoice's alone.
 */
export async function* streamCreditNoteCosts(
  db: Db,
  tenant: string,
  q: { start: number; end: number; categories: readonly ReceivedCategory[] },
  maxTimeMS: number,
): AsyncIterable<CreditNoteCost> {
  const pipeline: Document[] = [
    { $match: { tenant, 'settlements.date': { $gte: q.start, $lte: q.end } } },
    { $match: { category: { $in: [...q.categories] }, paymentState: { $ne: 'cancelled' } } },
    {
      $project: {
        category: 1,
        subTotal: 1,
        discount: { $ifNull: ['$discount', 0] },
        total: 1,
        exchangeRate: { $ifNull: ['$exchangeRate', 1] },
        descriptions: { $map: { input: { $ifNull: ['$concepts', []] }, as: 'c', in: { $ifNull: ['$$c.description', ''] } } },
        notes: {
          $filter: {
            input: { $ifNull: ['$settlements', []] },
            as: 's',
            cond: {
              $and: [{ $eq: ['$$s.kind', 'creditNote'] }, { $ne: ['$$s.cancelled', true] }, { $gte: ['$$s.date', q.start] }, { $lte: ['$$s.date', q.end] }],
            },
          },
        },
      },
    },
    { $match: { 'notes.0': { $exists: true } } },
    { $lookup: { from: COLLECTIONS.receivedAssignments, localField: '_id', foreignField: '_id', as: 'a' } },
    {
      $project: {
        category: 1,
        subTotal: 1,
        discount: 1,
        total: 1,
        exchangeRate: 1,
        descriptions: 1,
        notes: { $map: { input: '$notes', as: 's', in: { date: '$$s.date', amount: '$$s.amount', exchangeRate: '$$s.exchangeRate', taxes: '$$s.taxes' } } },
        // The tenant is a $literal: in an expression a string beginning with `$` is a field.
        a: { $filter: { input: '$a', as: 'x', cond: { $eq: ['$$x.tenant', { $literal: tenant }] } } },
      },
    },
  ];
  type Row = Pick<CostDocRow, 'category' | 'subTotal' | 'discount' | 'exchangeRate' | 'descriptions'> & {
    total: number;
    notes: (CreditNoteSettlement & { date: number })[];
    a: { vehicle?: string | null; tripId?: string | null }[];
  };
  for await (const r of receivedDocs(db).aggregate<Row>(pipeline, { maxTimeMS, batchSize: AUDIT_BATCH_SIZE })) {
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
