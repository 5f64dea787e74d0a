/**
 * An invoice's concepts (CFDI conceptos) for a trip: one freight line per leg,
 * a toll line, sometimes demurrage, and shortage indemnity lines; amounts in
 * integer cents until the document is assembled. The representation choices
 * (SAT keys, ObjetoImp, which lines are retained) are in scripts/demo/generate.ts.
 */
import type { InvoiceConcept } from '../../lib/model/financial-document.ts';
import { fromCents, productCents, rateOfCents } from '../../lib/money/cents.ts';
import { CONCEPT_CODES } from './catalog.ts';
import type { ClientProfile } from './clients.ts';
import { shipmentNo } from './ids.ts';
import { fmtInt, round4 } from './numbers.ts';
import type { Rng } from './random.ts';
import { billedFreightCents, type LegSketch, type TripSketch } from './trip-sketch.ts';
import { toleranceOf, type World } from './world.ts';

export interface ConceptDraft {
  code: string;
  kind: InvoiceConcept['kind'];
  desc: string;
  quantity: number;
  unitPrice: number;
  amountC: number;
  discountC: number;
  objetoImp: InvoiceConcept['objetoImp'];
  vatRate: number;
  vatC: number;
  retentionRate: number;
  retentionC: number;
}

export interface ConceptDrafts {
  drafts: ConceptDraft[];
  /** Σ shortage amounts, cents (the document's iFalt). */
  faltC: number;
}

/** The concepts of the invoice of trip sketch `sk` emitted at invDate; draws in this order: discount, demurrage, shortage charges. */
export function conceptDrafts(world: World, sk: TripSketch, rng: Rng, invDate: number): ConceptDrafts {
  const client = sk.client;
  const vatRate = world.settings.vatRate;
  const retRate = client.isCompany ? world.settings.retentionRate : 0;
  const discountPct = drawDiscountPct(rng, client);
  const drafts = sk.legs.map((leg, i) => freightDraft(world, sk, leg, i, discountPct, vatRate, retRate));
  if (sk.toll > 0) drafts.push(tollDraft(world, sk, vatRate));
  if (rng.chance(0.07)) drafts.push(demurrageDraft(world, sk, rng, vatRate, retRate));
  const shortage = shortageDrafts(world, sk, rng, invDate);
  let faltC = 0;
  for (const d of shortage) faltC += d.amountC;
  return { drafts: [...drafts, ...shortage], faltC };
}

/** The client's volume discount when it applies, else an occasional 2–10% one. */
function drawDiscountPct(rng: Rng, client: ClientProfile): number {
  if (client.discountPct > 0 && rng.chance(client.discountRate)) return client.discountPct;
  if (rng.chance(0.04)) return rng.int(2, 10) / 100;
  return 0;
}

/** A concept subject to VAT (ObjetoImp 02), its taxes computed on amount − discount. */
export function taxedDraft(
  code: string,
  kind: InvoiceConcept['kind'],
  desc: string,
  quantity: number,
  unitPrice: number,
  amountC: number,
  discountC: number,
  vatRate: number,
  retentionRate: number,
): ConceptDraft {
  const baseC = amountC - discountC;
  return {
    code,
    kind,
    desc,
    quantity,
    unitPrice,
    amountC,
    discountC,
    objetoImp: '02',
    vatRate,
    vatC: rateOfCents(baseC, vatRate),
    retentionRate,
    retentionC: retentionRate > 0 ? rateOfCents(baseC, retentionRate) : 0,
  };
}

function freightDraft(world: World, sk: TripSketch, leg: LegSketch, i: number, discountPct: number, vatRate: number, retRate: number): ConceptDraft {
  const origin = world.origins[sk.origin]!;
  const dest = world.destinations[sk.dest]!;
  const amountC = billedFreightCents(leg.loaded, sk.tarifUnit);
  const what = leg.products.map((p) => p.product.short).join(' y ');
  return taxedDraft(
    sk.client.freightCode,
    'freight',
    `Flete en autotanque: ${what}, ${fmtInt(leg.loaded)} L, ${origin.city.name}, ${origin.city.state} a ${dest.city.name}, ${dest.city.state}. Embarque ${shipmentNo(sk, i)}`,
    leg.loaded,
    sk.tarifUnit,
    amountC,
    Math.round(amountC * discountPct),
    vatRate,
    retRate,
  );
}

/** Toll reimbursement: taxed, never retained. */
function tollDraft(world: World, sk: TripSketch, vatRate: number): ConceptDraft {
  const crossings = sk.legs.length;
  const origin = world.origins[sk.origin]!;
  const dest = world.destinations[sk.dest]!;
  return taxedDraft(
    CONCEPT_CODES.toll,
    'toll',
    `Reembolso de casetas de peaje, ${crossings} ${crossings === 1 ? 'viaje' : 'viajes'} ${origin.city.name} - ${dest.city.name}`,
    crossings,
    sk.toll,
    crossings * sk.toll * 100,
    0,
    vatRate,
    0,
  );
}

/** 1–3 days of waiting at the unloading place; retained only for clients whose practice is to retain on it. */
function demurrageDraft(world: World, sk: TripSketch, rng: Rng, vatRate: number, retRate: number): ConceptDraft {
  const client = sk.client;
  const days = rng.weighted([1, 2, 3], [0.65, 0.25, 0.1]);
  return taxedDraft(
    CONCEPT_CODES.demurrage,
    'demurrage',
    `Estadías: ${days} ${days === 1 ? 'día' : 'días'} de espera en descarga, ${world.destinations[sk.dest]!.name}`,
    days,
    client.demurrageRate,
    days * client.demurrageRate * 100,
    0,
    vatRate,
    client.retainsOnDemurrage ? retRate : 0,
  );
}

/**
 * Shortage indemnity lines (not subject to VAT) for legs offloaded before the
 * invoice beyond tolerance: charged for 70% of legs beyond 0.5%, 8% of the others.
 */
function shortageDrafts(world: World, sk: TripSketch, rng: Rng, invDate: number): ConceptDraft[] {
  const drafts: ConceptDraft[] = [];
  sk.legs.forEach((leg, i) => {
    if (leg.unloadDate === null || leg.unloadDate >= invDate || leg.loaded === 0) return;
    const pct = ((leg.loaded - leg.offloaded) / leg.loaded) * 100;
    const tols = leg.products.map((p) => toleranceOf(world, sk.client.def.rfc, p.product.code));
    let allowance = 0;
    leg.products.forEach((p, pi) => (allowance += (tols[pi]! * p.loaded) / 100));
    const legTol = (allowance / leg.loaded) * 100;
    if (!(pct - legTol > 1e-9)) return;
    if (!rng.chance(pct > 0.5 ? 0.7 : 0.08)) return;
    leg.products.forEach((p, pi) => {
      const draft = shortageDraft(world, sk, i, p, tols[pi]!, pct);
      if (draft) drafts.push(draft);
    });
  });
  return drafts;
}

/** Litres charged: the shortage beyond the tolerance ('excess') or all of it ('all'), at the tenant's price per litre. */
function shortageDraft(world: World, sk: TripSketch, leg: number, p: LegSketch['products'][number], tol: number, legPct: number): ConceptDraft | null {
  const short = p.loaded - p.offloaded;
  const litres = world.settings.shrinkageRecoveryMode === 'all' ? short : Math.max(0, short - (tol * p.loaded) / 100);
  const quantity = Math.round(litres * 100) / 100;
  if (quantity <= 0) return null;
  const price = world.settings.pricePerLitre[p.product.code] ?? 0;
  const amountC = productCents(quantity, 2, price, 2);
  if (amountC <= 0) return null;
  return {
    code: p.product.code,
    kind: 'shortage',
    desc: `Faltante de ${p.product.short} fuera de tolerancia: ${quantity} L (embarque ${shipmentNo(sk, leg)}, merma ${legPct.toFixed(2)}%, tolerancia ${round4(tol)}%)`,
    quantity,
    unitPrice: price,
    amountC,
    discountC: 0,
    objetoImp: '01',
    vatRate: 0,
    vatC: 0,
    retentionRate: 0,
    retentionC: 0,
  };
}

/** Concept totals in cents; iTot = iSub − iDesc + iTax1 − iTax2. */
export interface ConceptTotals {
  subC: number;
  discC: number;
  vatC: number;
  retC: number;
  shipC: number;
  tollC: number;
  totC: number;
}

/** The stored concepts (pesos) and their totals (cents, summed exactly). */
export function finishConcepts(drafts: readonly ConceptDraft[]): { concepts: InvoiceConcept[]; totals: ConceptTotals } {
  const t: ConceptTotals = { subC: 0, discC: 0, vatC: 0, retC: 0, shipC: 0, tollC: 0, totC: 0 };
  const concepts: InvoiceConcept[] = drafts.map((d) => {
    t.subC += d.amountC;
    t.discC += d.discountC;
    t.vatC += d.vatC;
    t.retC += d.retentionC;
    if (d.kind === 'freight') t.shipC += d.amountC;
    if (d.kind === 'toll') t.tollC += d.amountC;
    return {
      code: d.code,
      kind: d.kind,
      desc: d.desc,
      quantity: d.quantity,
      unitPrice: d.unitPrice,
      amount: fromCents(d.amountC),
      discount: fromCents(d.discountC),
      objetoImp: d.objetoImp,
      vatRate: d.vatRate,
      vat: fromCents(d.vatC),
      retentionRate: d.retentionRate,
      retention: fromCents(d.retentionC),
    };
  });
  t.totC = t.subC - t.discC + t.vatC - t.retC;
  return { concepts, totals: t };
}
