/**
 * Shrinkage (merma) of a trip leg: loaded − offloaded volume, its percentage of
 * the loaded volume, the tolerance test and the recoverable value.
 *
 * Multi-product legs: each product gets its own tolerance (most specific rule,
 * see `toleranceFor`) and the leg's tolerance is the LOADED-WEIGHTED mean of
 * them. That equals pooling each product's allowance in litres
 * (Σ tol_p% × loaded_p) and testing the leg's net shrinkage against the pool,
 * which is how per-litre contractual tolerances add up, and it reduces exactly
 * to the single-product rule. "Strictest product wins" was rejected: one
 * compartment of a strict product would tighten the whole load.
 *
 * Only a delivered leg has a shrinkage (lib/trips/delivery-state.ts): these
 * functions take legs whose offloaded litres are known; a leg in transit has
 * none, and callers report it as such instead of as a loss.
 */
import type { LegProduct } from '../model/trip-document.ts';
import type { TenantSettings, ToleranceRule } from '../model/tenant-settings.ts';
import { round2 } from '../money/cents.ts';
import { ownEntry } from '../shared/own-entry.ts';

/** Float slack for percentage comparisons (a 0.2% tolerance must not trip on 0.20000000000000004). */
const PCT_EPSILON = 1e-9;

const round3 = (x: number): number => Math.round(x * 1000) / 1000 + 0; // litres to the millilitre
const round4 = (x: number): number => Math.round(x * 10_000) / 10_000 + 0;

export interface LegVolumes {
  loaded: number;
  offloaded: number;
  /** loaded − offloaded; negative means a volume gain (temperature), never flagged. */
  shrinkageVolume: number;
  /** shrinkage / loaded × 100, 4 decimals; 0 when loaded is 0. */
  shrinkagePercent: number;
  /** shrinkagePercent > tolerancePct, strictly: shrinkage exactly at tolerance is fine. */
  exceedsTolerance: boolean;
}

/** A product of a delivered leg: its offloaded litres are known. */
export type DeliveredProduct = LegProduct & { offloaded: number };
type ProductVolumes = Pick<LegProduct, 'loaded'> & { offloaded: number };

/** Σ loaded litres of a leg, to the millilitre (known whether or not it is delivered). */
export function legLoaded(leg: { products: readonly Pick<LegProduct, 'loaded'>[] }): number {
  let loaded = 0;
  for (const p of leg.products) loaded += p.loaded;
  return round3(loaded);
}

/** Volumes and shrinkage of a delivered leg. */
export function legVolumes(leg: { products: readonly ProductVolumes[] }, tolerancePct: number): LegVolumes {
  let loaded = 0;
  let offloaded = 0;
  for (const p of leg.products) {
    loaded += p.loaded;
    offloaded += p.offloaded;
  }
  const shrinkage = loaded - offloaded;
  const pct = loaded === 0 ? 0 : (shrinkage / loaded) * 100;
  return {
    loaded: round3(loaded),
    offloaded: round3(offloaded),
    shrinkageVolume: round3(shrinkage),
    shrinkagePercent: round4(pct),
    exceedsTolerance: loaded !== 0 && pct - tolerancePct > PCT_EPSILON,
  };
}

type ToleranceSettings = Pick<TenantSettings, 'shrinkageTolerancePct' | 'toleranceRules'>;

/**
 * Tolerance (percent) for a client and product: client+product rule, else a
 * client-only rule, else a product-only rule, else the tenant default. Among
 * rules of equal specificity the first listed wins.
 */
export function toleranceFor(settings: ToleranceSettings, client: string | undefined, productCode: string | undefined): number {
  const rules: readonly ToleranceRule[] = settings.toleranceRules;
  const find = (pred: (r: ToleranceRule) => boolean): ToleranceRule | undefined => rules.find(pred);
  const hasClient = (r: ToleranceRule): boolean => r.client !== undefined && r.client !== '';
  const hasProduct = (r: ToleranceRule): boolean => r.productCode !== undefined && r.productCode !== '';
  const rule =
    (client !== undefined && productCode !== undefined ? find((r) => r.client === client && r.productCode === productCode) : undefined) ??
    (client !== undefined ? find((r) => r.client === client && !hasProduct(r)) : undefined) ??
    (productCode !== undefined ? find((r) => r.productCode === productCode && !hasClient(r)) : undefined);
  return rule?.pct ?? settings.shrinkageTolerancePct;
}

/**
 * Leg tolerance: loaded-weighted mean of product tolerances (see file header), exact: a leg is judged
 * against it (shown to 4 decimals, `shownPct`), so shrinkage exactly at the pooled allowance is fine
 * (0.3% of 10,000 L + 0.5% of 20,000 L = 130 L, 0.43333…%; rounded to 0.4333% it flagged 130 L).
 * With nothing loaded there is nothing to weigh: the client (or default) tolerance.
 */
export function legTolerancePct(
  leg: { products: readonly Pick<LegProduct, 'code' | 'loaded'>[] },
  settings: ToleranceSettings,
  client: string | undefined,
): number {
  let loaded = 0;
  let allowance = 0;
  for (const p of leg.products) {
    loaded += p.loaded;
    allowance += p.loaded * toleranceFor(settings, client, p.code);
  }
  if (loaded === 0) return toleranceFor(settings, client, undefined);
  return allowance / loaded;
}

/** A percentage as answers show it: 4 decimals. */
export const shownPct = round4;

export interface RecoverableInput {
  shrinkageLitres: number;
  loadedLitres: number;
  tolerancePct: number;
  pricePerLitre: number;
  /** 'excess': only litres beyond the tolerance; 'all': all shrinkage once the tolerance is exceeded. */
  mode: 'excess' | 'all';
}

export interface Recoverable {
  /** tolerancePct% × loaded. */
  toleranceLitres: number;
  /** max(0, shrinkage − toleranceLitres). */
  excessLitres: number;
  /** Litres charged under the mode. */
  recoverableLitres: number;
  /** recoverableLitres × pricePerLitre, rounded to cents. */
  value: number;
  exceedsTolerance: boolean;
}

export function recoverableShrinkage(input: RecoverableInput): Recoverable {
  const { shrinkageLitres, loadedLitres, tolerancePct, pricePerLitre, mode } = input;
  const toleranceLitres = (tolerancePct / 100) * loadedLitres;
  const excess = round3(Math.max(0, shrinkageLitres - toleranceLitres));
  const pct = loadedLitres === 0 ? 0 : (shrinkageLitres / loadedLitres) * 100;
  const exceeds = loadedLitres !== 0 && pct - tolerancePct > PCT_EPSILON;
  const recoverableLitres = mode === 'all' ? (exceeds ? round3(Math.max(0, shrinkageLitres)) : 0) : excess;
  return {
    toleranceLitres: round3(toleranceLitres),
    excessLitres: excess,
    recoverableLitres,
    value: round2(recoverableLitres * pricePerLitre),
    exceedsTolerance: exceeds,
  };
}

export interface LegShrinkage extends LegVolumes, Recoverable {
  tolerancePct: number;
  /** Loaded-weighted price per litre of the leg's products (priced products only), shown to 4 decimals; the value uses the exact one. */
  pricePerLitre: number;
  /** Product codes without a price in settings: their litres are valued at 0. */
  unpricedCodes: string[];
}

/**
 * Everything the shrinkage audit and alert need for one delivered leg,
 * from tenant settings: weighted tolerance, volumes, and the recoverable value
 * at the loaded-weighted product price.
 */
export function legShrinkage(
  leg: { products: readonly DeliveredProduct[] },
  settings: ToleranceSettings & Pick<TenantSettings, 'pricePerLitre' | 'shrinkageRecoveryMode'>,
  client: string | undefined,
): LegShrinkage {
  const tolerancePct = legTolerancePct(leg, settings, client);
  const volumes = legVolumes(leg, tolerancePct);
  let weighted = 0;
  let loaded = 0;
  const unpriced = new Set<string>();
  for (const p of leg.products) {
    loaded += p.loaded;
    const price = ownEntry(settings.pricePerLitre, p.code);
    if (price === undefined) unpriced.add(p.code);
    else weighted += price * p.loaded;
  }
  // The value at the exact weighted price; the price is shown to 4 decimals (rounded first, it moved a 2,000 L claim by 8 cents).
  const exactPrice = loaded === 0 ? 0 : weighted / loaded;
  const rec = recoverableShrinkage({
    shrinkageLitres: volumes.shrinkageVolume,
    loadedLitres: volumes.loaded,
    tolerancePct,
    pricePerLitre: exactPrice,
    mode: settings.shrinkageRecoveryMode,
  });
  // The leg flag comes from legVolumes so the two views of one leg never disagree.
  return { ...rec, ...volumes, tolerancePct: shownPct(tolerancePct), pricePerLitre: round4(exactPrice), unpricedCodes: [...unpriced].sort() };
}
