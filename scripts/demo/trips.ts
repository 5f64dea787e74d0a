/**
 * Trip documents (the TMS `trips` collection) built from their sketches and
 * the plan's links: legs with products, pricing and Mexico City compact dates,
 * delivered legs with their reception ticket, legs on the road without volumes;
 * `idFinan` is the trip's valid invoice, a dangling legacy id, or null.
 */
import type { TripDocument, TripLeg, TripPlace } from '../../lib/model/trip-document.ts';
import { fromCents, productCents } from '../../lib/money/cents.ts';
import { mxYmdInt } from '../../lib/time/mexico-city.ts';
import { mexicanAddress } from '../../lib/model/mexican-address.ts';
import { docId, nCedOf, nRelOf, receptionTicket, shipmentNo, tripId } from './ids.ts';
import { pad } from './numbers.ts';
import type { PlaceInfo } from './places.ts';
import { BROKEN_LINK, type Plan } from './plan.ts';
import { LEG_STATUS } from './status-codes.ts';
import { billedFreightCents, tripSketch, type LegSketch, type TripSketch } from './trip-sketch.ts';
import type { World } from './world.ts';

/** Lazily, in id (= creation) order. */
export function* tripsIterator(world: World, plan: Plan): Generator<TripDocument> {
  for (let k = 0; k < world.tripCount; k++) yield buildTrip(world, plan, k);
}

export function buildTrip(world: World, plan: Plan, k: number): TripDocument {
  const sk = tripSketch(world, k);
  const link = plan.tripDoc[k]!;
  const idFinan = link >= 0 ? docId(world, link) : link === BROKEN_LINK ? `${world.prefix}-FD-L${pad(k + 1, 6)}` : null;
  const dest = world.destinations[sk.dest]!;
  const id = tripId(world, k);
  return {
    _id: id,
    idFinan,
    nCed: nCedOf(sk),
    nRel: nRelOf(sk),
    company: world.tenant,
    client: sk.client.def.rfc,
    createdAt: sk.createdAt,
    // Last change: the last offload recorded, or the creation of a trip still in transit.
    lastUpdate: new Date(Math.max(sk.createdAt, sk.lastUnload ?? sk.createdAt)).toISOString(),
    driver: { id: sk.driver.id, name: sk.driver.name, license: sk.driver.license },
    vehicle: { id: sk.vehicle.id, plate: sk.vehicle.plate, config: sk.vehicle.cfg.config, trailers: [...sk.vehicle.trailers] },
    origin: placeDoc(world.origins[sk.origin]!),
    destination: placeDoc(dest),
    shipments: sk.legs.map((leg, i) => legDoc(world, sk, leg, i, dest)),
  };
}

function legDoc(world: World, sk: TripSketch, leg: LegSketch, i: number, dest: PlaceInfo): TripLeg {
  const billedC = billedFreightCents(leg.loaded, sk.tarifUnit);
  return {
    id: `${world.prefix}-${shipmentNo(sk, i)}`,
    shipment: shipmentNo(sk, i),
    date: mxYmdInt(leg.loadDate),
    loadDate: leg.loadDate,
    unloadDate: leg.unloadDate,
    region: dest.city.state,
    status: leg.unloadDate === null ? LEG_STATUS.inTransit : LEG_STATUS.delivered,
    distanceKm: sk.route.distanceKm,
    pricing: {
      merchandiseValue: merchandiseValue(world, leg),
      pricingModel: 'volume',
      tarifUnit: sk.tarifUnit,
      toll: sk.toll,
      billedFreight: fromCents(billedC),
      totalFreight: fromCents(billedC + sk.toll * 100),
    },
    // On the road at endDate: nothing offloaded is known yet (null, not 0), no delivery recorded.
    products: leg.products.map((p) => ({
      desc: p.product.desc,
      code: p.product.code,
      unit: p.product.unit,
      loaded: p.loaded,
      offloaded: leg.unloadDate === null ? null : p.offloaded,
    })),
    // Delivered: the client's reception ticket, recorded by the carrier.
    ...(leg.unloadDate === null ? {} : { delivery: { source: 'recorded' as const, ticket: receptionTicket(sk, i) } }),
  };
}

/** Value of the fuel loaded, at the tenant's price per litre. */
function merchandiseValue(world: World, leg: LegSketch): number {
  let cents = 0;
  for (const p of leg.products) cents += productCents(p.loaded, 0, world.settings.pricePerLitre[p.product.code] ?? 0, 2);
  return fromCents(cents);
}

function placeDoc(p: PlaceInfo): TripPlace {
  const { city } = p;
  const address = mexicanAddress({ street: p.street, city: city.name, municipality: city.municipality, state: city.state, country: 'MEX', zip: p.zip });
  return { id: p.id, nif: p.nif, name: p.name, address };
}
