/**
 * The tenant's clients and their habits: revenue weight (Zipf by rank), payment
 * behaviour (delay around the due date, instalments, bad debt, PUE share),
 * discounts, demurrage, tariff and billing-lag factors, products bought.
 */
import { CITIES, CLIENTS, CONCEPT_CODES, PRODUCT_MIX, PRODUCTS, PUBLIC_RFC, type City, type ClientDef, type FuelProduct } from './catalog.ts';
import { WeightedTable, type Rng } from './random.ts';
import type { TenantProfile } from './tenant-profiles.ts';

export interface ClientProfile {
  def: ClientDef;
  /** 1-based number within the tenant (for relation numbers). */
  no: number;
  isCompany: boolean;
  weight: number;
  /** Indexes of the client's delivery places in World.destinations. */
  places: number[];
  creditDays: number;
  payDelayMean: number;
  payDelaySd: number;
  installments: readonly [number, number, number];
  badDebtRate: number;
  pueRate: number;
  discountPct: number;
  discountRate: number;
  retainsOnDemurrage: boolean;
  demurrageRate: number;
  tariffFactor: number;
  billingLagFactor: number;
  freightCode: string;
  products: WeightedTable<FuelProduct>;
}

/** Payment behaviours (punctual, slightly late, late, very late): delay mean and sd ranges in days, bad-debt rate. */
const BEHAVIOURS = [
  [-5, 2, 1.5, 4, 0.004],
  [1, 12, 3, 8, 0.008],
  [14, 32, 6, 14, 0.04],
  [35, 60, 12, 20, 0.12],
] as const;
const BEHAVIOUR_WEIGHTS = [0.3, 0.45, 0.2, 0.05];

export interface DrawnClients {
  /** In draw order, numbered 1…n. */
  clients: ClientProfile[];
  /** Per client: the cities of the area where it has places. */
  cityPools: City[][];
}

/** The area's clients in a random rank order; a client without a city in the area is left out. */
export function drawClients(rng: Rng, profile: TenantProfile): DrawnClients {
  const area = profile.area;
  const order = rng.shuffle(CLIENTS.filter((c) => c.areas.includes(area)));
  const areaCities = CITIES.filter((c) => c.areas.includes(area));
  const clients: ClientProfile[] = [];
  const cityPools: City[][] = [];
  order.forEach((def, rank) => {
    const cities = areaCities.filter((c) => def.states.includes(c.state));
    if (cities.length === 0) return;
    clients.push(drawClient(rng, def, rank, profile));
    cityPools.push(cities);
  });
  clients.forEach((c, i) => (c.no = i + 1));
  return { clients, cityPools };
}

function drawClient(rng: Rng, def: ClientDef, rank: number, profile: TenantProfile): ClientProfile {
  const isCompany = def.rfc.length === 12 && def.rfc !== PUBLIC_RFC;
  let weight = (rank + 1) ** -profile.concentration * rng.float(0.8, 1.25);
  if (def.kind === 'persona') weight *= 0.12;
  if (def.kind === 'publico') weight *= 0.06;
  const [meanLo, meanHi, sdLo, sdHi, badDebt] = BEHAVIOURS[rng.weightedIndex(BEHAVIOUR_WEIGHTS)]!;
  const hasVolumeDiscount = isCompany && rng.chance(0.22);
  return {
    def,
    no: 0,
    isCompany,
    weight,
    places: [],
    creditDays: 0,
    payDelayMean: rng.float(meanLo, meanHi),
    payDelaySd: rng.float(sdLo, sdHi),
    installments: def.kind === 'distribuidor' ? [0.7, 0.22, 0.08] : rng.chance(0.3) ? [0.8, 0.15, 0.05] : [0.93, 0.06, 0.01],
    badDebtRate: badDebt,
    pueRate: def.kind === 'publico' ? 1 : def.kind === 'persona' ? 0.7 : 0.08,
    discountPct: hasVolumeDiscount ? Math.round(rng.float(1, 4) * 2) / 200 : 0,
    discountRate: hasVolumeDiscount ? rng.float(0.3, 0.8) : 0,
    retainsOnDemurrage: isCompany && rng.chance(0.5),
    demurrageRate: rng.int(25, 45) * 100,
    tariffFactor: rng.float(0.94, 1.08),
    billingLagFactor: rng.float(0.6, 1.6),
    freightCode: rng.chance(0.85) ? profile.freightCode : otherFreightCode(profile.freightCode),
    products: new WeightedTable([PRODUCTS.diesel, PRODUCTS.regular, PRODUCTS.premium], [...PRODUCT_MIX[def.kind]]),
  };
}

const otherFreightCode = (code: string): string => (code === CONCEPT_CODES.fuelFreight ? CONCEPT_CODES.roadFreight : CONCEPT_CODES.fuelFreight);
