/**
 * Deterministic demo dataset for one tenant (carrier): settings, trips and
 * financial documents (CFDI invoices with their payments and cancellations).
 *
 * ## Modules (one concept each; this file is the public entry point)
 * - world.ts: the tenant's world, drawn once: tenant-profiles.ts (how each
 *   demo carrier bills), clients.ts (clients and their habits), places.ts
 *   (terminals, delivery places, routes), fleet.ts (vehicles and drivers).
 * - trip-sketch.ts: every random decision about one trip, redrawn on demand.
 * - plan.ts: which trips are billed, which documents exist, in which order.
 * - trips.ts: the stored trips.
 * - documents.ts: the stored financial documents, from invoice-concepts.ts,
 *   tax-errors.ts and payments.ts.
 * - received.ts: the CFDIs the carrier received (fuel per truck, tolls, maintenance, tyres,
 *   insurance, one subcontracted trip), from their own sub-stream.
 * - ids.ts, numbers.ts, status-codes.ts; catalog.ts and random.ts underneath.
 *
 * ## Streaming and determinism
 * `generateTenant` does one cheap planning pass (typed arrays, a few bytes per
 * record) and returns *re-iterable* lazy collections: every
 * `for (const d of generated.financialDocs)` regenerates the same documents one
 * at a time, so 100,000 invoices never sit in memory together. Every trip and
 * every document draws from its own PRNG sub-stream (seed, stream, index), so:
 * same options ⇒ identical output (deep-equal, same order); a different seed ⇒
 * different data. Documents come in id order, which is emission order (folios
 * grow with time); trips come in id order, which is creation order.
 *
 * ## What the data looks like (representation choices)
 * - Trip ↔ invoice: one invoice per billed trip, one freight concept per leg
 *   (amount = leg.pricing.billedFreight = round2(loaded × tarifUnit)). About 90%
 *   of trips carry `idFinan`; delivered-but-unbilled trips have `idFinan: null`
 *   (revenue leakage, plus the natural backlog of the last days); ~0.5% point to
 *   an id that does not exist (`<P>-FD-L000123`, a legacy-system id). ~3% of
 *   invoices are issued at dispatch, before the load (negative dispatch-to-bill
 *   lag); the rest 0–10 days after the last offload, mostly.
 * - Invoices that do not belong to a trip of the collection ("ghost" trips:
 *   trips archived before the window, or a documents count larger than the
 *   trips count) are built the same way from a synthetic trip; their `ref2`
 *   cedula is `CED-H…` and matches no trip.
 * - Shortage (faltante/merma): CFDI amounts are never negative, so the
 *   deduction for product short-delivered beyond the contractual tolerance is
 *   an *indemnity line*: a concept of kind 'shortage', SAT key of the fuel
 *   (15101505…), ObjetoImp '01', vatRate 0, vat 0, retentionRate 0, retention 0,
 *   quantity = litres charged, unitPrice = settings.pricePerLitre[product],
 *   amount = round2(quantity × unitPrice). It counts in SubTotal (iSub) and in
 *   no tax base; the document-level `iFalt` = Σ amounts of shortage concepts.
 *   Litres charged = shrinkage beyond the tolerance (`excess` mode) or all of
 *   it once the tolerance is exceeded (`all` mode), per product, with the
 *   tenant's tolerance rules. Only legs offloaded before the invoice can carry
 *   one; not every out-of-tolerance leg is charged (recovered < recoverable).
 * - Other concepts: freight (78101807 / 78101802, kind 'freight', ObjetoImp 02,
 *   VAT at settings.vatRate, 4% retention for company clients only); one toll
 *   concept (95111603, kind 'toll', taxed, never retained) when the route has
 *   tolls; sometimes demurrage (78141500, kind 'demurrage', taxed, retained
 *   only for clients whose practice is to retain on it). Discounts sit on
 *   freight concepts (concept.discount; iDesc = Σ).
 * - Arithmetic: per concept vat = round2((amount − discount) × vatRate),
 *   retention = round2((amount − discount) × retentionRate); document
 *   iSub = Σ amount, iDesc = Σ discount, iTax1 = Σ vat, iTax2 = Σ retention,
 *   iTot = iSub − iDesc + iTax1 − iTax2 ≥ 0, all summed in integer cents.
 *   The invoice subdocument mirrors them; `invoice.ship` = Σ freight amounts,
 *   `invoice.toll` = Σ toll amounts, `tarif1` = the trip's tariff per litre.
 *   ~2% of documents (35% of the ones later cancelled) carry ONE deliberate tax
 *   error on a concept (VAT off, VAT on the gross amount, retention on the whole
 *   subtotal, retention off/missing for a company, or retention charged to a
 *   person/public client); the document totals stay consistent with the
 *   declared (wrong) values, so only the per-concept check finds it.
 * - Status codes (settings.statusLabels): 4 Facturado (invoiced; also partly
 *   paid for tenants without a partial code), 5 Parcial (partly paid; only
 *   tenants whose profile has it, e.g. FNO), 6 Pagado (fully paid: valid
 *   payments + credit notes = iTot), 9 Cancelado (invoice cancelled).
 * - Payments: PaymentRecord kind 'payment' (CFDI P complement) and 'creditNote'
 *   (CFDI E). Valid records, in date order, chain their balances
 *   (balanceBefore of the first = iTot, balanceAfter = balanceBefore − amount,
 *   next balanceBefore = previous balanceAfter, never below 0). PUE invoices
 *   get one payment record 0–3 days after emission (a receipt of the payment in
 *   one exhibition, so balances compute uniformly). ~2% of payment records are
 *   cancelled: the wrong record (canceled: true, its own balances at the time)
 *   plus a CanceledRecord {target 'payment', motive '01', replacementUuid: the
 *   re-issued record's uuid}.
 * - Invoice cancellations (~3%): the cancelled document keeps its concepts and
 *   amounts, has status 9, no payments and
 *   canceled = [{target 'invoice', uuid: its own invoice.uuid, motive, ...}].
 *   Motive 01: replacementUuid = invoice.uuid of the replacement, a separate
 *   document (next folio) issued for the same trip, to which the trip's
 *   idFinan points. Motive 02: a new invoice replaces it without relation
 *   (replacementUuid null; the trip points to the new one). Motive 03: the
 *   operation did not happen (a ghost document, no trip).
 *   Each record states where it stands (status, requestedAt, statusSource, satStatus;
 *   scripts/demo/documents.ts withStatus): up to 1,000 MXN or within the business day after
 *   certification `accepted` at once (201); otherwise the receiver accepts within
 *   0.1–2.5 days (80%) or stays silent until its 3 business days end (`expired`, the
 *   record dated then); an answer after endDate leaves it `pending`: then the invoice is
 *   not cancelled (status 4, no payments). Apart from those, a few valid invoices carry
 *   a `rejected` request, and recent ones a `pending` one (rejectedRequest).
 * - Leg status: 4 Entregado (offloaded: unloadDate, each product's offloaded
 *   litres and the reception ticket, delivery {source 'recorded', ticket
 *   REC-000001-1}), 2 En tránsito (loaded, not yet offloaded at endDate:
 *   unloadDate null, product offloaded null, no delivery).
 * - Ids are globally unique: `<P>-FD-000001` (documents, _id = id),
 *   `<P>-VJ-000001` (trips), legs `<P>-EM-000001-1` with shipment id
 *   `EM-000001-1`, where <P> is opts.idPrefix or the letters of the RFC (TGO).
 * - Times: epoch ms; CFDI wall times are America/Mexico_City; compact leg dates
 *   are YYYYMMDD of the load in Mexico City. Nothing happens after endDate.
 */
import type { FinancialDocument } from '../../lib/model/financial-document.ts';
import type { TenantSettings } from '../../lib/model/tenant-settings.ts';
import type { TripDocument } from '../../lib/model/trip-document.ts';
import type { ServiceArea } from './catalog.ts';
import { docsIterator } from './documents.ts';
import { defaultIdPrefix } from './ids.ts';
import { DAY } from './numbers.ts';
import { buildPlan } from './plan.ts';
import { tripsIterator } from './trips.ts';
import { buildReceived, type ReceivedData } from './received.ts';
import { buildWorld, type WorldSpec } from './world.ts';

export { DOC_STATUS, DOC_STATUS_LABELS, LEG_STATUS, LEG_STATUS_LABELS } from './status-codes.ts';

/** End of 2026-11-15 in Mexico City (UTC−6). */
export const DEFAULT_END_DATE = new Date('2026-11-15T23:59:59.999-06:00');
export const DEFAULT_MONTHS = 12;

export interface GenerateTenantOptions {
  /** Tenant RFC (company of every record). */
  tenant: string;
  name: string;
  seed: number;
  /** Number of financial documents to produce (exactly). */
  invoices: number;
  /** Number of trips to produce (exactly). */
  trips: number;
  /** Nothing happens after this instant (default 2026-11-15 end of day, Mexico City). */
  endDate?: Date;
  /** History length in months (default 12). */
  months?: number;
  /** Id prefix (default: the letters of the RFC, e.g. 'TGO'); two tenants must not share one. */
  idPrefix?: string;
  /** Service area (default: per demo tenant, else derived from the RFC). */
  area?: ServiceArea;
}

export interface GeneratedTenant {
  settings: TenantSettings;
  /** Lazy and re-iterable: each iteration regenerates the same documents in id (= emission) order. */
  financialDocs: Iterable<FinancialDocument>;
  /** Lazy and re-iterable: each iteration regenerates the same trips in id (= creation) order. */
  trips: Iterable<TripDocument>;
  counts: { financialDocs: number; trips: number };
  /** The CFDIs the tenant received (a few hundred) and the carrier's one assignment, built when asked. */
  received: () => ReceivedData;
  /** Id prefix used (e.g. 'TGO'). */
  idPrefix: string;
}

export function generateTenant(opts: GenerateTenantOptions): GeneratedTenant {
  const world = buildWorld(worldSpec(opts));
  const plan = buildPlan(world);
  return {
    settings: world.settings,
    financialDocs: { [Symbol.iterator]: () => docsIterator(world, plan) },
    trips: { [Symbol.iterator]: () => tripsIterator(world, plan) },
    counts: { financialDocs: plan.docCount, trips: world.tripCount },
    received: () => buildReceived(world, plan),
    idPrefix: world.prefix,
  };
}

function assertCount(name: string, n: number): void {
  if (!Number.isInteger(n) || n < 0 || n > 50_000_000) throw new RangeError(`generateTenant: ${name} must be a non-negative integer (got ${n})`);
}

/** The options checked (RangeError naming the option), with their defaults. */
function worldSpec(opts: GenerateTenantOptions): WorldSpec {
  assertCount('invoices', opts.invoices);
  assertCount('trips', opts.trips);
  if (!opts.tenant) throw new RangeError('generateTenant: tenant is required');
  if (!Number.isFinite(opts.seed)) throw new RangeError('generateTenant: seed must be a finite number');
  const months = opts.months ?? DEFAULT_MONTHS;
  if (!(months > 0 && months <= 120)) throw new RangeError('generateTenant: months must be in (0, 120]');
  const end = (opts.endDate ?? DEFAULT_END_DATE).getTime();
  if (!Number.isFinite(end)) throw new RangeError('generateTenant: endDate is not a valid date');
  return {
    tenant: opts.tenant,
    name: opts.name,
    seed: opts.seed,
    invoices: opts.invoices,
    trips: opts.trips,
    start: end - Math.round(months * (365.25 / 12) * DAY),
    end,
    idPrefix: opts.idPrefix ?? defaultIdPrefix(opts.tenant),
    ...(opts.area ? { area: opts.area } : {}),
  };
}
