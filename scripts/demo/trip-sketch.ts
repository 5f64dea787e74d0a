/**
 * Trip sketches: every random decision about one trip (client, places,
 * vehicle, driver, legs with their volumes and shrinkage, tariff, toll),
 * before ids and links. A sketch is a pure function of (world, trip index), so
 * the plan, the trip and its invoice each redraw the same one instead of
 * keeping trips in memory. Ghost sketches are trips outside the collection
 * that documents still bill (see scripts/demo/generate.ts).
 */
import { productCents } from '../../lib/money/cents.ts';
import { mxDayStartAt, mxWallTime } from '../../lib/time/mexico-city.ts';
import type { FuelProduct } from './catalog.ts';
import type { ClientProfile } from './clients.ts';
import { pickVehicle, type DriverInfo, type VehicleInfo } from './fleet.ts';
import { DAY, HOUR, MIN, round4 } from './numbers.ts';
import type { RouteInfo } from './places.ts';
import type { Rng } from './random.ts';
import { STREAM, routeOf, streamRng, type World } from './world.ts';

export interface ProductSketch {
  product: FuelProduct;
  loaded: number;
  offloaded: number;
}

export interface LegSketch {
  loadDate: number;
  /** null = still in transit at endDate. */
  unloadDate: number | null;
  products: ProductSketch[];
  loaded: number;
  offloaded: number;
}

export interface TripSketch {
  /** Trip number (1-based) for real trips; ghost number for ghosts. */
  no: number;
  ghost: boolean;
  client: ClientProfile;
  origin: number;
  dest: number;
  route: RouteInfo;
  vehicle: VehicleInfo;
  driver: DriverInfo;
  createdAt: number;
  legs: LegSketch[];
  tarifUnit: number;
  /** Toll per leg, whole pesos. */
  toll: number;
  firstLoad: number;
  /** Last offload instant; null when the last leg is in transit. */
  lastUnload: number | null;
}

/** Trip k (0-based) of the collection: creation times spread evenly over the window. */
export function tripSketch(world: World, k: number): TripSketch {
  const rng = streamRng(world, STREAM.trip, k);
  const span = world.end - world.start;
  const base = world.start + (span * (k + rng.next())) / Math.max(1, world.tripCount);
  return sketchAt(world, rng, base, k + 1, false);
}

/** Ghost g (0-based): a trip not in the collection, anywhere in the window but its last two days. */
export function ghostSketch(world: World, g: number): TripSketch {
  const rng = streamRng(world, STREAM.ghost, g);
  const base = world.start + (world.end - world.start - 2 * DAY) * rng.next();
  return sketchAt(world, rng, base, g + 1, true);
}

function sketchAt(world: World, rng: Rng, base: number, no: number, ghost: boolean): TripSketch {
  const client = world.clientTable.pick(rng);
  const dest = rng.pick(client.places);
  const nearest = world.originsForDest[dest]!;
  const origin = nearest[Math.min(nearest.length - 1, rng.weightedIndex([0.6, 0.28, 0.12]))]!;
  const route = routeOf(world, origin, dest);
  const createdAt = dispatchTime(world, rng, base);
  const vehicle = pickVehicle(world, rng, createdAt);
  const driver = rng.chance(0.82) ? world.drivers[vehicle.primaryDriver]! : rng.pick(world.drivers);
  const legs = drawLegs(world, rng, client, route, vehicle, createdAt);
  const tarifUnit = drawTariff(world, rng, client, route, createdAt);
  const toll = route.tollShare > 0 ? Math.round(route.distanceKm * route.tollShare * vehicle.cfg.tollPerKm) : 0;
  return {
    no,
    ghost,
    client,
    origin,
    dest,
    route,
    vehicle,
    driver,
    createdAt,
    legs,
    tarifUnit,
    toll,
    firstLoad: legs[0]!.loadDate,
    lastUnload: legs[legs.length - 1]!.unloadDate,
  };
}

/** Dispatch on base's day, mostly between 05:00 and 21:00 Mexico City, inside the window. */
function dispatchTime(world: World, rng: Rng, base: number): number {
  const hour = 5 + (16 * (rng.next() + rng.next())) / 2;
  let createdAt = Math.round(mxDayStartAt(base) + hour * HOUR + rng.int(0, 59) * 1000);
  const latest = world.end - 2 * HOUR;
  if (createdAt > latest) createdAt = latest - rng.int(0, 120) * MIN;
  if (createdAt < world.start) createdAt = world.start + rng.int(1, 120) * MIN;
  return createdAt;
}

/** 1–3 legs (fewer on long routes), each loaded after the previous offload; the trip stops at a leg still in transit at endDate. */
function drawLegs(world: World, rng: Rng, client: ClientProfile, route: RouteInfo, vehicle: VehicleInfo, createdAt: number): LegSketch[] {
  const legWeights = route.distanceKm > 350 ? [0.9, 0.1, 0] : route.distanceKm > 150 ? [0.7, 0.25, 0.05] : [0.5, 0.32, 0.18];
  const nLegs = 1 + rng.weightedIndex(legWeights);
  const twoProductP = client.def.kind === 'industrial' ? 0 : vehicle.cfg.config === 'T3S2R4' ? 0.45 : vehicle.cfg.config === 'C3' ? 0.15 : 0.3;
  const legs: LegSketch[] = [];
  let prevUnload = createdAt;
  for (let i = 0; i < nLegs; i++) {
    let loadDate = i === 0 ? createdAt + Math.round(rng.float(0.75, 6) * HOUR) : prevUnload + Math.round((route.distanceKm / 60 + rng.float(1, 5)) * HOUR);
    if (loadDate > world.end) {
      if (i > 0) break;
      loadDate = world.end - rng.int(5, 60) * MIN;
    }
    const transitH = Math.min(48, Math.max(4, route.distanceKm / rng.float(42, 58) + rng.float(1.5, 5)));
    const unload = loadDate + Math.round(transitH * HOUR);
    const inTransit = unload > world.end;
    const items = drawLoad(rng, client, vehicle, twoProductP);
    const products = offload(rng, items, inTransit);
    let loaded = 0;
    let offloaded = 0;
    for (const p of products) {
      loaded += p.loaded;
      offloaded += p.offloaded;
    }
    legs.push({ loadDate, unloadDate: inTransit ? null : unload, products, loaded, offloaded });
    prevUnload = unload;
    if (inTransit) break;
  }
  return legs;
}

/** Litres loaded, 93–100% of the tank, one product or two split between compartments. */
function drawLoad(rng: Rng, client: ClientProfile, vehicle: VehicleInfo, twoProductP: number): { product: FuelProduct; loaded: number }[] {
  const total = Math.min(62_000, Math.max(20_000, Math.round(vehicle.capacity * rng.float(0.93, 1))));
  const p1 = client.products.pick(rng);
  if (!rng.chance(twoProductP)) return [{ product: p1, loaded: total }];
  let p2 = client.products.pick(rng);
  for (let t = 0; t < 6 && p2 === p1; t++) p2 = client.products.pick(rng);
  if (p2 === p1) return [{ product: p1, loaded: total }];
  const share = vehicle.cfg.config === 'T3S2R4' ? rng.float(0.45, 0.55) : rng.float(0.4, 0.7);
  const l1 = Math.round(total * share);
  return [
    { product: p1, loaded: l1 },
    { product: p2, loaded: total - l1 },
  ];
}

/** Litres offloaded per product: the leg's shrinkage, ±15% per product; nothing while in transit. */
function offload(rng: Rng, items: readonly { product: FuelProduct; loaded: number }[], inTransit: boolean): ProductSketch[] {
  const legPct = drawShrinkPct(rng);
  return items.map((it) => {
    const pct = legPct === 0 ? 0 : legPct * rng.float(0.85, 1.15);
    const off = inTransit ? 0 : Math.max(0, it.loaded - Math.round((it.loaded * pct) / 100));
    return { product: it.product, loaded: it.loaded, offloaded: off };
  });
}

/** Leg shrinkage percent: ~4% exactly 0, ~10% beyond 0.5%, ~6% in 0.3–0.5%, the rest in (0, 0.3]. */
function drawShrinkPct(rng: Rng): number {
  const r = rng.next();
  if (r < 0.04) return 0;
  if (r < 0.14) return 0.5 + 0.01 + Math.min(2.4, rng.exponential(0.45));
  if (r < 0.2) return rng.float(0.3, 0.5);
  return 0.005 + 0.295 * rng.next() ** 1.4;
}

/** Contract tariff per litre: distance-based, client factor, +4.5% each January; a few spot trips. */
function drawTariff(world: World, rng: Rng, client: ClientProfile, route: RouteInfo, createdAt: number): number {
  const yearFactor = 1.045 ** (mxWallTime(createdAt).year - world.endYear);
  let tarif = (0.38 + 0.00105 * route.distanceKm) * client.tariffFactor * yearFactor;
  if (rng.chance(0.08)) tarif *= rng.float(0.97, 1.06);
  return round4(Math.min(0.95, Math.max(0.35, tarif)));
}

/** A leg's billed freight in cents: round2(litres loaded × tariff per litre). */
export const billedFreightCents = (loaded: number, tarifUnit: number): number => productCents(loaded, 0, tarifUnit, 4);
