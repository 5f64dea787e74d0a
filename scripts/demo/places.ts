/**
 * Where trips go: the area's loading terminals (origins), each client's
 * delivery places (destinations), the three nearest terminals of every
 * destination, and the road route between two places (distance, toll share).
 */
import { OPERATORS, STREETS, TERMINALS, cityByKey, roadDistanceKm, type City, type ServiceArea } from './catalog.ts';
import type { ClientProfile } from './clients.ts';
import { pad } from './numbers.ts';
import { hashString, type Rng } from './random.ts';

export interface PlaceInfo {
  id: string;
  nif: string;
  name: string;
  street: string;
  zip: string;
  city: City;
}

export interface RouteInfo {
  distanceKm: number;
  /** Share of the route on toll roads (0 = free road). */
  tollShare: number;
}

/** The area's terminals, ids OR000001…, in catalogue order. */
export function terminalsOf(area: ServiceArea): PlaceInfo[] {
  return TERMINALS.filter((t) => t.areas.includes(area)).map((t, i) => {
    const city = cityByKey(t.cityKey);
    const op = OPERATORS[t.operator]!;
    return { id: `OR${pad(i + 1, 6)}`, nif: op.rfc, name: t.name, street: t.street, zip: city.zip, city };
  });
}

/** How many places a client of this kind receives fuel at. */
function placeCount(rng: Rng, kind: ClientProfile['def']['kind']): number {
  if (kind === 'gasolinera') return rng.int(3, 8);
  if (kind === 'distribuidor') return rng.int(3, 6);
  if (kind === 'industrial') return rng.int(1, 3);
  return kind === 'publico' ? 2 : 1;
}

function placeLabel(client: ClientProfile, city: City): string {
  const { kind, short } = client.def;
  if (kind === 'gasolinera' || kind === 'persona') return `E.S. ${short} ${city.name}`;
  if (kind === 'distribuidor') return `Almacén ${short} ${city.name}`;
  if (kind === 'industrial') return `Planta ${short} ${city.name}`;
  return `Entrega en sitio ${city.name}`;
}

function drawStreet(rng: Rng): string {
  const streetName = rng.pick(STREETS);
  return /^(Carretera|Autopista|Libramiento)/.test(streetName) ? `${streetName} Km ${rng.int(1, 150)}.${rng.int(0, 9)}` : `${streetName} ${rng.int(10, 3999)}`;
}

/** Every client's delivery places (ids DE000001…), in client order; records their indexes in client.places. */
export function drawDestinations(rng: Rng, clients: readonly ClientProfile[], cityPools: readonly City[][]): PlaceInfo[] {
  const destinations: PlaceInfo[] = [];
  clients.forEach((c, ci) => {
    const pool = cityPools[ci]!;
    const count = placeCount(rng, c.def.kind);
    for (let k = 0; k < count; k++) {
      const city = rng.pick(pool);
      const label = placeLabel(c, city);
      const street = drawStreet(rng);
      const zip = pad(Number(city.zip) + 10 * rng.int(0, 9), 5);
      c.places.push(destinations.length);
      destinations.push({
        id: `DE${pad(destinations.length + 1, 6)}`,
        nif: c.def.rfc,
        name: count > 1 ? `${label} No. ${k + 1}` : label,
        street,
        zip,
        city,
      });
    }
  });
  return destinations;
}

/** Per destination: the three nearest terminals (indexes into origins), nearest first. */
export function nearestOrigins(origins: readonly PlaceInfo[], destinations: readonly PlaceInfo[]): number[][] {
  return destinations.map((d) =>
    origins
      .map((o, i) => ({ i, km: roadDistanceKm(o.city, d.city) }))
      .sort((a, b) => a.km - b.km || a.i - b.i)
      .slice(0, 3)
      .map((r) => r.i),
  );
}

/** The road between two places: a pure function of their cities (memoised by the caller). */
export function routeBetween(o: PlaceInfo, d: PlaceInfo): RouteInfo {
  const distanceKm = roadDistanceKm(o.city, d.city);
  const h = hashString(`${o.city.key}>${d.city.key}`);
  // Short urban runs and a quarter of the routes use free roads only.
  const tollShare = distanceKm < 40 || h % 4 === 0 ? 0 : 0.4 + ((h >>> 8) % 50) / 100;
  return { distanceKm, tollShare };
}
