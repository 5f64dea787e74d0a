/**
 * Delivery state of a leg (docs/domain.md "Trips, legs and shrinkage"): a leg is
 * delivered once its offloaded volumes are known, that is an unload instant and
 * the offloaded litres of every product. Until then it is in transit: its
 * shrinkage is unknown (not 100%), it is never flagged, and no audit or alert
 * counts it as a loss.
 *
 * The same rule runs inside pipelines as `legDeliveredAtExpr`
 * (lib/db/pipeline.ts); test/cfdi/delivery-rule.ts runs both forms on the same
 * documents through the engine.
 */

/** What the rule reads of a leg (stored legs, compact audit rows). */
export interface DeliveryFields {
  unloadDate: number | null;
  products: readonly { offloaded?: number | null }[];
}

/** A leg whose volumes are all known. */
export type Delivered<L extends DeliveryFields> = L & {
  unloadDate: number;
  products: readonly (L['products'][number] & { offloaded: number })[];
};

/** The delivery instant (epoch ms), or null while the leg is in transit. */
export function legDeliveredAt(leg: DeliveryFields): number | null {
  if (typeof leg.unloadDate !== 'number') return null;
  for (const p of leg.products) if (typeof p.offloaded !== 'number') return null;
  return leg.unloadDate;
}

export function isDelivered<L extends DeliveryFields>(leg: L): leg is Delivered<L> {
  return legDeliveredAt(leg) !== null;
}
