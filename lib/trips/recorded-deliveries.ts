/**
 * A delivery recorded through the API (the client's reception ticket) outlives
 * a new import of the trip's Carta Porte: Carta Porte carries no delivered
 * volumes, so the imported trip would otherwise put the leg back in transit.
 * The delivery addenda of the CFDI (source `addenda`) still applies to legs
 * without a recorded delivery.
 */
import type { TripDocument, TripLeg } from '../model/trip-document.ts';
import { deliveredLeg } from './leg-delivery.ts';

const sameProducts = (a: TripLeg, b: TripLeg): boolean => a.products.length === b.products.length && a.products.every((p, i) => p.code === b.products[i]!.code);

/**
 * The imported leg with the recorded delivery of its stored version, judged by the rule that
 * recorded it (lib/trips/leg-delivery.ts; the instant is not judged against the clock again),
 * or null when it no longer fits the imported leg: loaded litres corrected below what was
 * offloaded (more than 5% above the new loaded volume), or a loading instant moved after the
 * unloading.
 */
function withKeptDelivery(leg: TripLeg, kept: TripLeg): TripLeg | null {
  if (kept.unloadDate === null) return null;
  const out = deliveredLeg(
    leg,
    {
      offloadDate: kept.unloadDate,
      products: kept.products.map((p) => ({ code: p.code, offloaded: p.offloaded ?? Number.NaN })),
      ticket: kept.delivery?.ticket ?? null,
    },
    Number.POSITIVE_INFINITY,
  );
  if (!('leg' in out)) return null;
  return { ...out.leg, status: kept.status, delivery: kept.delivery };
}

/**
 * The imported trip with the recorded deliveries of its stored version: for each
 * leg (same leg id) whose stored delivery was recorded and whose products are
 * still the same codes in the same order, the unloading instant, status,
 * offloaded litres and delivery record are kept, as long as the recorded delivery
 * still fits the imported leg. A leg whose goods changed in the new file takes the
 * imported version (the recorded litres no longer fit it), and so does one whose
 * loaded litres or loading instant changed so that the recorded delivery would be
 * refused now.
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
      return withKeptDelivery(leg, kept) ?? leg;
    }),
  };
}
