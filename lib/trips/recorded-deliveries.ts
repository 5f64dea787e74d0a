/**
 * A delivery recorded through the API (the client's reception ticket) outlives
 * a new import of the trip's Carta Porte: Carta Porte carries no delivered
 * volumes, so the imported trip would otherwise put the leg back in transit.
 * The delivery addenda of the CFDI (source `addenda`) still applies to legs
 * without a recorded delivery.
 */
import type { TripDocument, TripLeg } from '../model/trip-document.ts';

const sameProducts = (a: TripLeg, b: TripLeg): boolean => a.products.length === b.products.length && a.products.every((p, i) => p.code === b.products[i]!.code);

/**
 * The imported trip with the recorded deliveries of its stored version: for each
 * leg (same leg id) whose stored delivery was recorded and whose products are
 * still the same codes in the same order, the unloading instant, status,
 * offloaded litres and delivery record are kept. A leg whose goods changed in
 * the new file takes the imported version (the recorded litres no longer fit it).
 */
export function keepRecordedDeliveries(imported: TripDocument, stored: TripDocument | undefined): TripDocument {
  if (!stored) return imported;
  const recorded = new Map(stored.shipments.filter((l) => l.delivery?.source === 'recorded').map((l) => [l.id, l]));
  if (recorded.size === 0) return imported;
  return {
    ...imported,
    shipments: imported.shipments.map((leg) => {
      const kept = recorded.get(leg.id);
      if (!kept || !sameProducts(leg, kept)) return leg;
      return {
        ...leg,
        unloadDate: kept.unloadDate,
        status: kept.status,
        products: leg.products.map((p, i) => ({ ...p, offloaded: kept.products[i]!.offloaded })),
        delivery: kept.delivery,
      };
    }),
  };
}
