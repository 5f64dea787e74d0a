/**
 * Recording a leg's delivery, the client's reception ticket (docs/domain.md "Trips,
 * legs and shrinkage"): the pure rule behind
 * PUT /api/shipments/{id}/legs/{shipmentId}/delivery and POST /api/deliveries.
 *
 * A delivery is the whole ticket for one leg: the unloading instant and the
 * offloaded litres of every product the leg carries (a code the leg carries
 * twice is given twice, matched in order), optionally the ticket reference.
 * Applying it makes the leg delivered (status 4, delivery source `recorded`);
 * applying the same one again changes nothing, another one replaces it.
 */
import { isDeepStrictEqual } from 'node:util';
import { LEG_STATUS, type TripDocument, type TripLeg } from '../model/trip-document.ts';
import { addTo } from '../shared/add-to.ts';

/**
 * An offloaded volume may exceed the loaded one by at most this percentage.
 * Fuel expands about 0.1% per °C (diesel 0.08%), so a gain from loading in the
 * cool morning to unloading in the afternoon heat stays well under 2%; more
 * than 5% is a typing error (a digit too many), not a delivery.
 */
export const MAX_GAIN_PCT = 5;
/** How far ahead of the service's clock an unloading instant may be (clocks differ a little). */
export const MAX_FUTURE_MS = 5 * 60_000;

export interface DeliveryInput {
  /** Unloading instant, epoch ms. */
  offloadDate: number;
  /** Offloaded litres per product, matched to the leg's products by code, in order. */
  products: readonly { code: string; offloaded: number }[];
  ticket: string | null;
}

/** What is wrong with a delivery, located as the JSON body names it: `offloadDate`, `products`, `products.<i>.code`, `products.<i>.offloaded`. */
export interface DeliveryProblem {
  field: string;
  /** Index in `products` of the product it is about, when it is about one. */
  product?: number;
  message: string;
}

export type LegDeliveryOutcome =
  | { status: 'no-leg' }
  | { status: 'invalid'; problems: DeliveryProblem[] }
  | { status: 'unchanged'; trip: TripDocument }
  | { status: 'applied'; trip: TripDocument };

const round3 = (x: number): number => Math.round(x * 1000) / 1000 + 0;
const iso = (ms: number): string => (Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms));

/** The leg with the delivery applied, or why it cannot be. */
export function deliveredLeg(leg: TripLeg, input: DeliveryInput, now: number): { leg: TripLeg } | { problems: DeliveryProblem[] } {
  const problems: DeliveryProblem[] = [];
  if (!Number.isFinite(input.offloadDate)) problems.push({ field: 'offloadDate', message: 'offloadDate is not a date-time' });
  else {
    if (leg.loadDate !== null && input.offloadDate < leg.loadDate) {
      problems.push({ field: 'offloadDate', message: `offloadDate ${iso(input.offloadDate)} is before the leg was loaded (${iso(leg.loadDate)})` });
    }
    if (input.offloadDate > now + MAX_FUTURE_MS) problems.push({ field: 'offloadDate', message: `offloadDate ${iso(input.offloadDate)} is in the future` });
  }

  // Each code's places in the leg, in order; the k-th time a code is given fills its k-th place.
  const places = new Map<string, number[]>();
  leg.products.forEach((p, i) => addTo(places, p.code, i));
  const carried = [...places.keys()].join(', ') || 'nothing';
  const given = new Map<string, number>();
  for (const p of input.products) given.set(p.code, (given.get(p.code) ?? 0) + 1);
  const used = new Map<string, number>();
  const offloaded: (number | null)[] = leg.products.map(() => null);
  input.products.forEach((p, k) => {
    const mine = places.get(p.code);
    if (!mine) {
      problems.push({ field: `products.${k}.code`, product: k, message: `leg ${leg.shipment} does not carry product ${p.code} (it carries ${carried})` });
      return;
    }
    const n = used.get(p.code) ?? 0;
    used.set(p.code, n + 1);
    if (n >= mine.length) {
      const times = (x: number): string => (x === 1 ? 'once' : `${x} times`);
      problems.push({
        field: `products.${k}.code`,
        product: k,
        message: `product ${p.code} is given ${times(given.get(p.code)!)}; leg ${leg.shipment} carries it ${times(mine.length)}`,
      });
      return;
    }
    const place = mine[n]!;
    const loaded = leg.products[place]!.loaded;
    const max = round3(loaded * (1 + MAX_GAIN_PCT / 100));
    if (!Number.isFinite(p.offloaded) || p.offloaded < 0) {
      problems.push({ field: `products.${k}.offloaded`, product: k, message: `offloaded must be a number of litres ≥ 0` });
    } else if (p.offloaded > max) {
      problems.push({
        field: `products.${k}.offloaded`,
        product: k,
        message: `offloaded ${p.offloaded} L of product ${p.code} is more than ${MAX_GAIN_PCT}% above the ${loaded} L loaded (at most ${max} L)`,
      });
    } else offloaded[place] = round3(p.offloaded);
  });
  for (const [code, mine] of places) {
    const missing = mine.length - Math.min(used.get(code) ?? 0, mine.length);
    if (missing > 0) {
      problems.push({
        field: 'products',
        message: `product ${code} of leg ${leg.shipment} is missing${mine.length > 1 ? ` (${missing} of its ${mine.length} lines)` : ''}: every product of the leg needs its offloaded litres`,
      });
    }
  }
  if (problems.length) return { problems };
  return {
    leg: {
      ...leg,
      unloadDate: input.offloadDate,
      status: LEG_STATUS.delivered,
      products: leg.products.map((p, i) => ({ ...p, offloaded: offloaded[i]! })),
      delivery: { source: 'recorded', ticket: input.ticket },
    },
  };
}

/**
 * The trip with one leg's delivery applied: `unchanged` when the leg already says
 * exactly this (a repeated request writes nothing), `applied` otherwise.
 * `lastUpdate` is left to the writer (nextLastUpdate).
 */
export function applyLegDelivery(trip: TripDocument, shipmentId: string, input: DeliveryInput, now: number): LegDeliveryOutcome {
  const index = trip.shipments.findIndex((l) => l.shipment === shipmentId);
  if (index < 0) return { status: 'no-leg' };
  const current = trip.shipments[index]!;
  const out = deliveredLeg(current, input, now);
  if ('problems' in out) return { status: 'invalid', problems: out.problems };
  if (isDeepStrictEqual(out.leg, current)) return { status: 'unchanged', trip };
  return { status: 'applied', trip: { ...trip, shipments: trip.shipments.map((l, i) => (i === index ? out.leg : l)) } };
}

/**
 * The `lastUpdate` of a write: now, and always after the one read, so every
 * write moves it and a write conditional on the `lastUpdate` it read is a
 * version check (lib/trips/trips-repo.ts replaceTripsIfUnchanged).
 */
export function nextLastUpdate(previous: string | undefined, now: Date): string {
  const after = previous === undefined ? -Infinity : Date.parse(previous) + 1;
  return new Date(Math.max(now.getTime(), Number.isNaN(after) ? -Infinity : after)).toISOString();
}
