/**
 * A tenant's world: profile and settings, clients, places, routes and fleet.
 * Drawn once per generation from its own PRNG sub-stream; the plan, trips and
 * documents only read it (routes and tolerances are memoised in it).
 */
import { DEFAULT_SETTINGS, type TenantSettings } from '../../lib/model/tenant-settings.ts';
import { mxWallTime } from '../../lib/time/mexico-city.ts';
import { toleranceFor } from '../../lib/trips/shrinkage.ts';
import type { ServiceArea } from './catalog.ts';
import { drawClients, type ClientProfile } from './clients.ts';
import { drawFleet, type Fleet } from './fleet.ts';
import { drawDestinations, nearestOrigins, routeBetween, terminalsOf, type PlaceInfo, type RouteInfo } from './places.ts';
import { Rng, WeightedTable, hashString, mix32 } from './random.ts';
import { profileFor, type TenantProfile } from './tenant-profiles.ts';

/** PRNG sub-streams: every trip, document, uuid … draws from (seed, stream, index), so records are independent. */
export const STREAM = {
  world: 1,
  trip: 2,
  plan: 3,
  doc: 4,
  uuid: 5,
  ghost: 6,
  ghostPlan: 7,
  thinning: 8,
  /** Where each invoice's cancellation stands (accepted, tacit, pending, rejected): its own stream, so the rest is drawn as before. */
  cancellation: 9,
  /** The received CFDIs (scripts/demo/received.ts): their own stream, so trips and documents are drawn as before. */
  received: 10,
} as const;

/** What a world is drawn from: the generator's options, checked and with their defaults. */
export interface WorldSpec {
  tenant: string;
  name: string;
  seed: number;
  invoices: number;
  trips: number;
  /** History window [start, end], epoch ms. */
  start: number;
  end: number;
  idPrefix: string;
  area?: ServiceArea;
}

export interface World extends Fleet {
  tenant: string;
  /** The tenant's seed (options seed mixed with the RFC). */
  seed: number;
  prefix: string;
  profile: TenantProfile;
  settings: TenantSettings;
  start: number;
  end: number;
  /** Mexico City year of end (tariffs step up each January). */
  endYear: number;
  tripCount: number;
  docTarget: number;
  clients: ClientProfile[];
  clientTable: WeightedTable<ClientProfile>;
  origins: PlaceInfo[];
  destinations: PlaceInfo[];
  /** Per destination: the three nearest terminals (indexes into origins), nearest first. */
  originsForDest: number[][];
  routes: Map<number, RouteInfo>;
  tolerances: Map<string, number>;
}

/** A PRNG on one sub-stream of the tenant's seed: streamRng(world, STREAM.doc, j). */
export const streamRng = (world: World, ...parts: number[]): Rng => new Rng(mix32(world.seed, ...parts));

export function buildWorld(spec: WorldSpec): World {
  const { tenant, start, end } = spec;
  const profile = profileFor(tenant, spec.area);
  const seed = mix32(spec.seed, hashString(tenant));
  // One stream, drawn in this order: clients, their places, the fleet.
  const rng = new Rng(mix32(seed, STREAM.world));
  const { clients, cityPools } = drawClients(rng, profile);
  const settings = settingsOf(spec, profile, clients);
  for (const c of clients) c.creditDays = settings.creditDaysByClient[c.def.rfc] ?? settings.defaultCreditDays;
  const origins = terminalsOf(profile.area);
  const destinations = drawDestinations(rng, clients, cityPools);
  const fleet = drawFleet(rng, spec.trips, start, end);
  return {
    tenant,
    seed,
    prefix: spec.idPrefix,
    profile,
    settings,
    start,
    end,
    endYear: mxWallTime(end).year,
    tripCount: spec.trips,
    docTarget: spec.invoices,
    clients,
    clientTable: new WeightedTable(
      clients,
      clients.map((c) => c.weight),
    ),
    origins,
    destinations,
    originsForDest: nearestOrigins(origins, destinations),
    routes: new Map(),
    tolerances: new Map(),
    ...fleet,
  };
}

/** Default settings with the profile's overrides (which name clients by revenue rank). */
function settingsOf(spec: WorldSpec, profile: TenantProfile, clients: readonly ClientProfile[]): TenantSettings {
  const byWeight = [...clients].sort((a, b) => b.weight - a.weight);
  return {
    _id: spec.tenant,
    name: spec.name,
    ...structuredClone(DEFAULT_SETTINGS),
    ...profile.settings(byWeight),
  };
}

/** The route from an origin to a destination (by index), memoised per world. */
export function routeOf(world: World, origin: number, dest: number): RouteInfo {
  const key = origin * 1_000_000 + dest;
  let r = world.routes.get(key);
  if (!r) {
    r = routeBetween(world.origins[origin]!, world.destinations[dest]!);
    world.routes.set(key, r);
  }
  return r;
}

/** Tolerance (percent) of a client and product, memoised per world. */
export function toleranceOf(world: World, client: string, productCode: string): number {
  const key = `${client}|${productCode}`;
  let tol = world.tolerances.get(key);
  if (tol === undefined) {
    tol = toleranceFor(world.settings, client, productCode);
    world.tolerances.set(key, tol);
  }
  return tol;
}
