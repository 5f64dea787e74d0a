/**
 * Deterministic demo dataset for one tenant (carrier): settings, trips and
 * financial documents (CFDI invoices with their payments and cancellations).
 *
 * ## Streaming and determinism
 * `generateTenant` does one cheap planning pass (typed arrays, a few bytes per
 * record) and returns *re-iterable* lazy collections: every
 * `for (const d of generated.financialDocs)` regenerates the same documents one
 * at a time, so 100,000 invoices never sit in memory together. Every trip and
 * every document draws from its own PRNG sub-stream (seed, stream, index), so:
 * same options ⇒ identical output (deep-equal, same order); a different seed ⇒
 * different data. Documents come in id order, which is emission order (folios
 * grow with time); trips come in id order, which is creation order.
 *
 * ## What the data looks like (representation choices)
 * - Trip ↔ invoice: one invoice per billed trip, one freight concept per leg
 *   (amount = leg.pricing.billedFreight = round2(loaded × tarifUnit)). About 90%
 *   of trips carry `idFinan`; delivered-but-unbilled trips have `idFinan: null`
 *   (revenue leakage, plus the natural backlog of the last days); ~0.5% point to
 *   an id that does not exist (`<P>-FD-L000123`, a legacy-system id). ~3% of
 *   invoices are issued at dispatch, before the load (negative dispatch-to-bill
 *   lag); the rest 0–10 days after the last offload, mostly.
 * - Invoices that do not belong to a trip of the collection ("ghost" trips:
 *   trips archived before the window, or a documents count larger than the
 *   trips count) are built the same way from a synthetic trip; their `ref2`
 *   cedula is `CED-H…` and matches no trip.
 * - Shortage (faltante/merma): CFDI amounts are never negative, so the
 *   deduction for product short-delivered beyond the contractual tolerance is
 *   an *indemnity line*: a concept of kind 'shortage', SAT key of the fuel
 *   (15101505…), ObjetoImp '01', vatRate 0, vat 0, retentionRate 0, retention 0,
 *   quantity = litres charged, unitPrice = settings.pricePerLitre[product],
 *   amount = round2(quantity × unitPrice). It counts in SubTotal (iSub) and in
 *   no tax base; the document-level `iFalt` = Σ amounts of shortage concepts.
 *   Litres charged = shrinkage beyond the tolerance (`excess` mode) or all of
 *   it once the tolerance is exceeded (`all` mode), per product, with the
 *   tenant's tolerance rules. Only legs offloaded before the invoice can carry
 *   one; not every out-of-tolerance leg is charged (recovered < recoverable).
 * - Other concepts: freight (78101807 / 78101802, kind 'freight', ObjetoImp 02,
 *   VAT at settings.vatRate, 4% retention for company clients only); one toll
 *   concept (95111603, kind 'toll', taxed, never retained) when the route has
 *   tolls; sometimes demurrage (78141500, kind 'demurrage', taxed, retained
 *   only for clients whose practice is to retain on it). Discounts sit on
 *   freight concepts (concept.discount; iDesc = Σ).
 * - Arithmetic: per concept vat = round2((amount − discount) × vatRate),
 *   retention = round2((amount − discount) × retentionRate); document
 *   iSub = Σ amount, iDesc = Σ discount, iTax1 = Σ vat, iTax2 = Σ retention,
 *   iTot = iSub − iDesc + iTax1 − iTax2 ≥ 0, all summed in integer cents.
 *   The invoice subdocument mirrors them; `invoice.ship` = Σ freight amounts,
 *   `invoice.toll` = Σ toll amounts, `tarif1` = the trip's tariff per litre.
 *   ~2% of documents (35% of the ones later cancelled) carry ONE deliberate tax
 *   error on a concept (VAT off, VAT on the gross amount, retention on the whole
 *   subtotal, retention off/missing for a company, or retention charged to a
 *   person/public client); the document totals stay consistent with the
 *   declared (wrong) values, so only the per-concept check finds it.
 * - Status codes (settings.statusLabels): 4 Facturado (invoiced; also partly
 *   paid for tenants without a partial code), 5 Parcial (partly paid; only
 *   tenants whose profile has it, e.g. FNO), 6 Pagado (fully paid: valid
 *   payments + credit notes = iTot), 9 Cancelado (invoice cancelled).
 * - Payments: PaymentRecord kind 'payment' (CFDI P complement) and 'creditNote'
 *   (CFDI E). Valid records, in date order, chain their balances
 *   (balanceBefore of the first = iTot, balanceAfter = balanceBefore − amount,
 *   next balanceBefore = previous balanceAfter, never below 0). PUE invoices
 *   get one payment record 0–3 days after emission (a receipt of the payment in
 *   one exhibition, so balances compute uniformly). ~2% of payment records are
 *   cancelled: the wrong record (canceled: true, its own balances at the time)
 *   plus a CanceledRecord {target 'payment', motive '01', replacementUuid: the
 *   re-issued record's uuid}.
 * - Invoice cancellations (~3%): the cancelled document keeps its concepts and
 *   amounts, has status 9, no payments and
 *   canceled = [{target 'invoice', uuid: its own invoice.uuid, motive, ...}].
 *   Motive 01: replacementUuid = invoice.uuid of the replacement, a separate
 *   document (next folio) issued for the same trip, to which the trip's
 *   idFinan points. Motive 02: a new invoice replaces it without relation
 *   (replacementUuid null; the trip points to the new one). Motive 03: the
 *   operation did not happen (a ghost document, no trip).
 * - Leg status: 4 Entregado (offloaded), 2 En tránsito (loaded, not yet
 *   offloaded at endDate: unloadDate null, product offloaded 0).
 * - Ids are globally unique: `<P>-FD-000001` (documents, _id = id),
 *   `<P>-VJ-000001` (trips), legs `<P>-EM-000001-1` with shipment id
 *   `EM-000001-1`, where <P> is opts.idPrefix or the letters of the RFC (TGO).
 * - Times: epoch ms; CFDI wall times are America/Mexico_City; compact leg dates
 *   are YYYYMMDD of the load in Mexico City. Nothing happens after endDate.
 */
import type {
  CanceledRecord,
  FinancialDocument,
  InvoiceConcept,
  PaymentRecord,
} from '../model/financial-document.ts';
import type { TripDocument, TripLeg, TripPlace } from '../model/trip-document.ts';
import { DEFAULT_SETTINGS, type TenantSettings } from '../model/tenant-settings.ts';
import { fromCents } from '../money/cents.ts';
import { isoWeekday, mxAddDays, mxDateString, mxDayStart, mxWallTime, mxYmdInt } from '../time/mexico-city.ts';
import { toleranceFor } from '../trips/shrinkage.ts';
import {
  CITIES,
  CLIENTS,
  CONCEPT_CODES,
  FIRST_NAMES,
  OPERATORS,
  PRODUCT_MIX,
  PRODUCTS,
  PUBLIC_RFC,
  STATES,
  STREETS,
  SURNAMES,
  TERMINALS,
  VEHICLE_CONFIGS,
  cityByKey,
  roadDistanceKm,
  type City,
  type ClientDef,
  type FuelProduct,
  type ServiceArea,
  type VehicleConfigDef,
} from './catalog.ts';
import { Rng, WeightedTable, hashString, mix32 } from './random.ts';

// ---------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------

/** End of 2026-11-15 in Mexico City (UTC−6). */
export const DEFAULT_END_DATE = new Date('2026-11-15T23:59:59.999-06:00');
export const DEFAULT_MONTHS = 12;

/** Workflow status codes used by the demo financial documents. */
export const DOC_STATUS = { invoiced: 4, partial: 5, paid: 6, cancelled: 9 } as const;
export const DOC_STATUS_LABELS: Readonly<Record<string, string>> = {
  '4': 'Facturado',
  '5': 'Parcial',
  '6': 'Pagado',
  '9': 'Cancelado',
};

/** Leg status codes used by the demo trips. */
export const LEG_STATUS = { inTransit: 2, delivered: 4 } as const;
export const LEG_STATUS_LABELS: Readonly<Record<string, string>> = { '2': 'En tránsito', '4': 'Entregado' };

export interface GenerateTenantOptions {
  /** Tenant RFC (company of every record). */
  tenant: string;
  name: string;
  seed: number;
  /** Number of financial documents to produce (exactly). */
  invoices: number;
  /** Number of trips to produce (exactly). */
  trips: number;
  /** Nothing happens after this instant (default 2026-11-15 end of day, Mexico City). */
  endDate?: Date;
  /** History length in months (default 12). */
  months?: number;
  /** Id prefix (default: the letters of the RFC, e.g. 'TGO'); two tenants must not share one. */
  idPrefix?: string;
  /** Service area (default: per demo tenant, else derived from the RFC). */
  area?: ServiceArea;
}

export interface GeneratedTenant {
  settings: TenantSettings;
  /** Lazy and re-iterable: each iteration regenerates the same documents in id (= emission) order. */
  financialDocs: Iterable<FinancialDocument>;
  /** Lazy and re-iterable: each iteration regenerates the same trips in id (= creation) order. */
  trips: Iterable<TripDocument>;
  counts: { financialDocs: number; trips: number };
  /** Id prefix used (e.g. 'TGO'). */
  idPrefix: string;
}

export function generateTenant(opts: GenerateTenantOptions): GeneratedTenant {
  const world = buildWorld(opts);
  const plan = buildPlan(world);
  return {
    settings: world.settings,
    financialDocs: { [Symbol.iterator]: () => docsIterator(world, plan) },
    trips: { [Symbol.iterator]: () => tripsIterator(world, plan) },
    counts: { financialDocs: plan.docCount, trips: world.tripCount },
    idPrefix: world.prefix,
  };
}

// ---------------------------------------------------------------------------
// Time helpers (Mexico City)
// ---------------------------------------------------------------------------

const MIN = 60_000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** First instant of the Mexico City day containing t. */
const mxDayStartOf = (t: number): number => mxDayStart(mxDateString(t));
const mxYear = (t: number): number => mxWallTime(t).year;

/** 'YYMMDD' of the Monday of t's week (Mexico City), for weekly relation numbers. */
function mondayYymmdd(t: number): string {
  const day = mxDateString(t);
  const monday = mxAddDays(day, 1 - isoWeekday(day));
  return `${monday.slice(2, 4)}${monday.slice(5, 7)}${monday.slice(8, 10)}`;
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');
const fmtInt = (n: number): string => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const round4 = (x: number): number => Math.round(x * 10_000) / 10_000;

// ---------------------------------------------------------------------------
// World: per-tenant catalogue of clients, places, routes and fleet
// ---------------------------------------------------------------------------

const STREAM = {
  world: 1,
  trip: 2,
  plan: 3,
  doc: 4,
  uuid: 5,
  ghost: 6,
  ghostPlan: 7,
  thinning: 8,
} as const;

interface TenantProfile {
  area: ServiceArea;
  serie: string;
  folioStart: number;
  /** Freight SAT key most clients are billed with. */
  freightCode: string;
  /** Status code of a partly paid invoice (4 = stays Facturado). */
  partialStatus: number;
  /** Zipf exponent of client revenue weights (higher = more concentrated). */
  concentration: number;
  users: readonly string[];
  settings(clientsByWeight: readonly ClientProfile[]): Partial<TenantSettings>;
}

const DEMO_PROFILES: Readonly<Record<string, TenantProfile>> = {
  TGO850101AB1: {
    area: 'golfo',
    serie: 'A',
    folioStart: 18_001,
    freightCode: CONCEPT_CODES.fuelFreight,
    partialStatus: DOC_STATUS.invoiced,
    concentration: 0.8,
    users: ['facturacion.ana', 'facturacion.luis', 'tms.integracion'],
    settings: (clients) => {
      const companies = clients.filter((c) => c.isCompany);
      const top = companies[0]?.def.rfc;
      const credit: Record<string, number> = {};
      if (companies[1]) credit[companies[1].def.rfc] = 60;
      if (companies[3]) credit[companies[3].def.rfc] = 15;
      if (companies[5]) credit[companies[5].def.rfc] = 45;
      return {
        statusLabels: { '4': 'Facturado', '6': 'Pagado', '9': 'Cancelado' },
        shrinkageTolerancePct: 0,
        toleranceRules: [
          ...(top ? [{ client: top, productCode: PRODUCTS.diesel.code, pct: 0.3 }, { client: top, pct: 0.2 }] : []),
          { productCode: PRODUCTS.premium.code, pct: 0.25 },
        ],
        shrinkageRecoveryMode: 'excess',
        creditDaysByClient: credit,
      };
    },
  },
  FNO900202CD2: {
    area: 'norte',
    serie: 'FN',
    folioStart: 5_001,
    freightCode: CONCEPT_CODES.roadFreight,
    partialStatus: DOC_STATUS.partial,
    concentration: 0.95,
    users: ['cxc.mariana', 'facturacion.jorge', 'tms.integracion'],
    settings: (clients) => {
      const companies = clients.filter((c) => c.isCompany);
      const credit: Record<string, number> = {};
      for (const i of [0, 2, 4, 7]) if (companies[i]) credit[companies[i].def.rfc] = 45;
      if (companies[9]) credit[companies[9].def.rfc] = 60;
      const lenient = companies[1]?.def.rfc;
      return {
        statusLabels: { '4': 'Facturado', '5': 'Parcial', '6': 'Pagado', '9': 'Cancelado' },
        shrinkageTolerancePct: 0.3,
        toleranceRules: [
          { productCode: PRODUCTS.regular.code, pct: 0.25 },
          ...(lenient ? [{ client: lenient, pct: 0.5 }] : []),
        ],
        shrinkageRecoveryMode: 'all',
        defaultCreditDays: 30,
        creditDaysByClient: credit,
        idleVehicleDays: 21,
      };
    },
  },
};

function genericProfile(tenant: string, area: ServiceArea): TenantProfile {
  const h = hashString(tenant);
  return {
    area,
    serie: 'F',
    folioStart: 1_001 + (h % 9_000),
    freightCode: area === 'golfo' ? CONCEPT_CODES.fuelFreight : CONCEPT_CODES.roadFreight,
    partialStatus: DOC_STATUS.invoiced,
    concentration: 0.9,
    users: ['facturacion', 'tms.integracion'],
    settings: () => ({ statusLabels: { '4': 'Facturado', '6': 'Pagado', '9': 'Cancelado' } }),
  };
}

interface ClientProfile {
  def: ClientDef;
  /** 1-based number within the tenant (for relation numbers). */
  no: number;
  isCompany: boolean;
  weight: number;
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

interface PlaceInfo {
  id: string;
  nif: string;
  name: string;
  street: string;
  zip: string;
  city: City;
}

interface RouteInfo {
  distanceKm: number;
  /** Share of the route on toll roads (0 = free road). */
  tollShare: number;
}

interface VehicleInfo {
  id: string;
  plate: string;
  cfg: VehicleConfigDef;
  capacity: number;
  trailers: readonly string[];
  activeFrom: number;
  activeTo: number;
  primaryDriver: number;
}

interface DriverInfo {
  id: string;
  name: string;
  license: string;
}

interface World {
  tenant: string;
  seed: number;
  prefix: string;
  profile: TenantProfile;
  settings: TenantSettings;
  start: number;
  end: number;
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
  vehicles: VehicleInfo[];
  vehicleTable: WeightedTable<VehicleInfo>;
  drivers: DriverInfo[];
}

function assertCount(name: string, n: number): void {
  if (!Number.isInteger(n) || n < 0 || n > 50_000_000) throw new RangeError(`generateTenant: ${name} must be a non-negative integer (got ${n})`);
}

function buildWorld(opts: GenerateTenantOptions): World {
  assertCount('invoices', opts.invoices);
  assertCount('trips', opts.trips);
  if (!opts.tenant) throw new RangeError('generateTenant: tenant is required');
  if (!Number.isFinite(opts.seed)) throw new RangeError('generateTenant: seed must be a finite number');
  const months = opts.months ?? DEFAULT_MONTHS;
  if (!(months > 0 && months <= 120)) throw new RangeError('generateTenant: months must be in (0, 120]');
  const end = (opts.endDate ?? DEFAULT_END_DATE).getTime();
  if (!Number.isFinite(end)) throw new RangeError('generateTenant: endDate is not a valid date');
  const start = end - Math.round(months * (365.25 / 12) * DAY);

  const tenant = opts.tenant;
  const area: ServiceArea = opts.area ?? DEMO_PROFILES[tenant]?.area ?? (hashString(tenant) % 2 === 0 ? 'golfo' : 'norte');
  const baseProfile = DEMO_PROFILES[tenant] ?? genericProfile(tenant, area);
  const profile: TenantProfile = { ...baseProfile, area };
  const letters = (/^[A-ZÑ&]+/i.exec(tenant)?.[0] ?? tenant).toUpperCase().replace(/[^A-Z]/g, 'X');
  const prefix = opts.idPrefix ?? (letters || 'T');
  const seed = mix32(opts.seed, hashString(tenant));
  const rng = new Rng(mix32(seed, STREAM.world));

  // --- clients -----------------------------------------------------------
  const candidates = CLIENTS.filter((c) => c.areas.includes(area));
  const order = rng.shuffle([...candidates]);
  const areaCities = CITIES.filter((c) => c.areas.includes(area));
  const clients: ClientProfile[] = [];
  const cityPools: City[][] = [];
  order.forEach((def, rank) => {
    const cities = areaCities.filter((c) => def.states.includes(c.state));
    if (cities.length === 0) return;
    const isCompany = def.rfc.length === 12 && def.rfc !== PUBLIC_RFC;
    let weight = (rank + 1) ** -profile.concentration * rng.float(0.8, 1.25);
    if (def.kind === 'persona') weight *= 0.12;
    if (def.kind === 'publico') weight *= 0.06;
    const behaviour = rng.weightedIndex([0.3, 0.45, 0.2, 0.05]);
    const [meanLo, meanHi, sdLo, sdHi, badDebt] = (
      [
        [-5, 2, 1.5, 4, 0.004],
        [1, 12, 3, 8, 0.008],
        [14, 32, 6, 14, 0.04],
        [35, 60, 12, 20, 0.12],
      ] as const
    )[behaviour]!;
    const mix = PRODUCT_MIX[def.kind];
    const productList = [PRODUCTS.diesel, PRODUCTS.regular, PRODUCTS.premium];
    const hasVolumeDiscount = isCompany && rng.chance(0.22);
    clients.push({
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
      freightCode: rng.chance(0.85)
        ? profile.freightCode
        : profile.freightCode === CONCEPT_CODES.fuelFreight
          ? CONCEPT_CODES.roadFreight
          : CONCEPT_CODES.fuelFreight,
      products: new WeightedTable(productList, [...mix]),
    });
    cityPools.push(cities);
  });
  clients.forEach((c, i) => (c.no = i + 1));

  // --- settings -------------------------------------------------------------
  const byWeight = [...clients].sort((a, b) => b.weight - a.weight);
  const overrides = profile.settings(byWeight);
  const settings: TenantSettings = {
    _id: tenant,
    name: opts.name,
    ...structuredClone(DEFAULT_SETTINGS),
    ...overrides,
  };
  for (const c of clients) c.creditDays = settings.creditDaysByClient[c.def.rfc] ?? settings.defaultCreditDays;

  // --- origins (terminals) -------------------------------------------------
  const origins: PlaceInfo[] = TERMINALS.filter((t) => t.areas.includes(area)).map((t, i) => {
    const city = cityByKey(t.cityKey);
    const op = OPERATORS[t.operator]!;
    return { id: `OR${pad(i + 1, 6)}`, nif: op.rfc, name: t.name, street: t.street, zip: city.zip, city };
  });

  // --- destinations -----------------------------------------------------------
  const destinations: PlaceInfo[] = [];
  clients.forEach((c, ci) => {
    const pool = cityPools[ci]!;
    const count =
      c.def.kind === 'gasolinera' ? rng.int(3, 8)
      : c.def.kind === 'distribuidor' ? rng.int(3, 6)
      : c.def.kind === 'industrial' ? rng.int(1, 3)
      : c.def.kind === 'publico' ? 2
      : 1;
    for (let k = 0; k < count; k++) {
      const city = rng.pick(pool);
      const label =
        c.def.kind === 'gasolinera' || c.def.kind === 'persona' ? `E.S. ${c.def.short} ${city.name}`
        : c.def.kind === 'distribuidor' ? `Almacén ${c.def.short} ${city.name}`
        : c.def.kind === 'industrial' ? `Planta ${c.def.short} ${city.name}`
        : `Entrega en sitio ${city.name}`;
      const streetName = rng.pick(STREETS);
      const street = /^(Carretera|Autopista|Libramiento)/.test(streetName)
        ? `${streetName} Km ${rng.int(1, 150)}.${rng.int(0, 9)}`
        : `${streetName} ${rng.int(10, 3999)}`;
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

  // --- routes: three nearest terminals per destination ----------------------------
  const originsForDest: number[][] = destinations.map((d) =>
    origins
      .map((o, i) => ({ i, km: roadDistanceKm(o.city, d.city) }))
      .sort((a, b) => a.km - b.km || a.i - b.i)
      .slice(0, 3)
      .map((r) => r.i),
  );

  // --- fleet --------------------------------------------------------------------
  const days = Math.max(1, (end - start) / DAY);
  const fleetSize = Math.max(6, Math.min(5_000, Math.ceil((opts.trips / days) * 1.7)));
  const configTable = new WeightedTable(VEHICLE_CONFIGS, VEHICLE_CONFIGS.map((c) => c.weight));
  const plates = new Set<string>();
  const uniquePlate = (make: () => string): string => {
    for (;;) {
      const p = make();
      if (!plates.has(p)) {
        plates.add(p);
        return p;
      }
    }
  };
  const driverCount = fleetSize + Math.max(2, Math.ceil(fleetSize * 0.2));
  const drivers: DriverInfo[] = [];
  const names = new Set<string>();
  for (let i = 0; i < driverCount; i++) {
    let name = '';
    do name = `${rng.pick(FIRST_NAMES)} ${rng.pick(SURNAMES)} ${rng.pick(SURNAMES)}`;
    while (names.has(name) && names.size < 100_000);
    names.add(name);
    drivers.push({ id: `OP-${pad(i + 1, 4)}`, name, license: `E${rng.digits(8)}` });
  }
  const retired = Math.max(1, Math.round(fleetSize * 0.06));
  const lateJoiners = Math.round(fleetSize * 0.08);
  const vehicles: VehicleInfo[] = [];
  for (let i = 0; i < fleetSize; i++) {
    const cfg = configTable.pick(rng);
    const capacity = Math.round(rng.float(cfg.capacity[0], cfg.capacity[1]) / 500) * 500;
    const plate = uniquePlate(() => `${rng.digits(2)}-${rng.letters(2)}-${rng.digits(1)}${rng.letters(1)}`);
    const trailers: string[] = [];
    for (let t = 0; t < cfg.trailers; t++) trailers.push(uniquePlate(() => `${rng.digits(1)}-U${rng.letters(1)}-${rng.digits(3)}`));
    let activeFrom = start - 365 * DAY;
    let activeTo = end + DAY;
    if (i >= fleetSize - retired) activeTo = end - rng.int(25, 90) * DAY;
    else if (i >= fleetSize - retired - lateJoiners) activeFrom = start + rng.int(30, 180) * DAY;
    vehicles.push({ id: `ECO-${pad(101 + i, 3)}`, plate, cfg, capacity, trailers, activeFrom, activeTo, primaryDriver: i });
  }
  const vehicleTable = new WeightedTable(vehicles, vehicles.map(() => rng.float(0.6, 1.4)));

  return {
    tenant,
    seed,
    prefix,
    profile,
    settings,
    start,
    end,
    endYear: mxYear(end),
    tripCount: opts.trips,
    docTarget: opts.invoices,
    clients,
    clientTable: new WeightedTable(clients, clients.map((c) => c.weight)),
    origins,
    destinations,
    originsForDest,
    routes: new Map(),
    tolerances: new Map(),
    vehicles,
    vehicleTable,
    drivers,
  };
}

function routeOf(world: World, origin: number, dest: number): RouteInfo {
  const key = origin * 1_000_000 + dest;
  let r = world.routes.get(key);
  if (!r) {
    const o = world.origins[origin]!;
    const d = world.destinations[dest]!;
    const distanceKm = roadDistanceKm(o.city, d.city);
    const h = hashString(`${o.city.key}>${d.city.key}`);
    // Short urban runs and a quarter of the routes use free roads only.
    const tollShare = distanceKm < 40 || h % 4 === 0 ? 0 : 0.4 + ((h >>> 8) % 50) / 100;
    r = { distanceKm, tollShare };
    world.routes.set(key, r);
  }
  return r;
}

function pickVehicle(world: World, rng: Rng, t: number): VehicleInfo {
  for (let i = 0; i < 40; i++) {
    const v = world.vehicleTable.pick(rng);
    if (v.activeFrom <= t && t <= v.activeTo) return v;
  }
  return world.vehicles.find((v) => v.activeFrom <= t && t <= v.activeTo) ?? world.vehicles[0]!;
}

// ---------------------------------------------------------------------------
// Trip sketches: every random decision about one trip, before ids and links
// ---------------------------------------------------------------------------

interface ProductSketch {
  product: FuelProduct;
  loaded: number;
  offloaded: number;
}

interface LegSketch {
  loadDate: number;
  /** null = still in transit at endDate. */
  unloadDate: number | null;
  products: ProductSketch[];
  loaded: number;
  offloaded: number;
}

interface TripSketch {
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

/** Leg shrinkage percent: ~4% exactly 0, ~10% beyond 0.5%, ~6% in 0.3–0.5%, the rest in (0, 0.3]. */
function drawShrinkPct(rng: Rng): number {
  const r = rng.next();
  if (r < 0.04) return 0;
  if (r < 0.14) return 0.5 + 0.01 + Math.min(2.4, rng.exponential(0.45));
  if (r < 0.2) return rng.float(0.3, 0.5);
  return 0.005 + 0.295 * rng.next() ** 1.4;
}

function tripSketch(world: World, k: number): TripSketch {
  const rng = new Rng(mix32(world.seed, STREAM.trip, k));
  const span = world.end - world.start;
  const base = world.start + (span * (k + rng.next())) / Math.max(1, world.tripCount);
  return sketchAt(world, rng, base, k + 1, false);
}

function ghostSketch(world: World, g: number): TripSketch {
  const rng = new Rng(mix32(world.seed, STREAM.ghost, g));
  const base = world.start + (world.end - world.start - 2 * DAY) * rng.next();
  return sketchAt(world, rng, base, g + 1, true);
}

function sketchAt(world: World, rng: Rng, base: number, no: number, ghost: boolean): TripSketch {
  const client = world.clientTable.pick(rng);
  const dest = rng.pick(client.places);
  const nearest = world.originsForDest[dest]!;
  const origin = nearest[Math.min(nearest.length - 1, rng.weightedIndex([0.6, 0.28, 0.12]))]!;
  const route = routeOf(world, origin, dest);

  // Dispatch mostly between 05:00 and 21:00, Mexico City.
  const hour = 5 + 16 * (rng.next() + rng.next()) / 2;
  let createdAt = Math.round(mxDayStartOf(base) + hour * HOUR + rng.int(0, 59) * 1000);
  const latest = world.end - 2 * HOUR;
  if (createdAt > latest) createdAt = latest - rng.int(0, 120) * MIN;
  if (createdAt < world.start) createdAt = world.start + rng.int(1, 120) * MIN;

  const vehicle = pickVehicle(world, rng, createdAt);
  const driver = rng.chance(0.82) ? world.drivers[vehicle.primaryDriver]! : rng.pick(world.drivers);

  const legWeights = route.distanceKm > 350 ? [0.9, 0.1, 0] : route.distanceKm > 150 ? [0.7, 0.25, 0.05] : [0.5, 0.32, 0.18];
  const nLegs = 1 + rng.weightedIndex(legWeights);
  const twoProductP = client.def.kind === 'industrial' ? 0 : vehicle.cfg.config === 'T3S2R4' ? 0.45 : vehicle.cfg.config === 'C3' ? 0.15 : 0.3;

  const legs: LegSketch[] = [];
  let prevUnload = createdAt;
  for (let i = 0; i < nLegs; i++) {
    let loadDate =
      i === 0
        ? createdAt + Math.round(rng.float(0.75, 6) * HOUR)
        : prevUnload + Math.round((route.distanceKm / 60 + rng.float(1, 5)) * HOUR);
    if (loadDate > world.end) {
      if (i > 0) break;
      loadDate = world.end - rng.int(5, 60) * MIN;
    }
    const transitH = Math.min(48, Math.max(4, route.distanceKm / rng.float(42, 58) + rng.float(1.5, 5)));
    const unload = loadDate + Math.round(transitH * HOUR);
    const inTransit = unload > world.end;

    const total = Math.min(62_000, Math.max(20_000, Math.round(vehicle.capacity * rng.float(0.93, 1))));
    const p1 = client.products.pick(rng);
    let items: { product: FuelProduct; loaded: number }[] = [{ product: p1, loaded: total }];
    if (rng.chance(twoProductP)) {
      let p2 = client.products.pick(rng);
      for (let t = 0; t < 6 && p2 === p1; t++) p2 = client.products.pick(rng);
      if (p2 !== p1) {
        const share = vehicle.cfg.config === 'T3S2R4' ? rng.float(0.45, 0.55) : rng.float(0.4, 0.7);
        const l1 = Math.round(total * share);
        items = [
          { product: p1, loaded: l1 },
          { product: p2, loaded: total - l1 },
        ];
      }
    }
    const legPct = drawShrinkPct(rng);
    let loaded = 0;
    let offloaded = 0;
    const products: ProductSketch[] = items.map((it) => {
      const pct = legPct === 0 ? 0 : legPct * rng.float(0.85, 1.15);
      const off = inTransit ? 0 : Math.max(0, it.loaded - Math.round((it.loaded * pct) / 100));
      loaded += it.loaded;
      offloaded += off;
      return { product: it.product, loaded: it.loaded, offloaded: off };
    });
    legs.push({ loadDate, unloadDate: inTransit ? null : unload, products, loaded, offloaded });
    prevUnload = unload;
    if (inTransit) break;
  }

  // Contract tariff per litre: distance-based, client factor, +4.5% each January; a few spot trips.
  const yearFactor = 1.045 ** (mxYear(createdAt) - world.endYear);
  let tarif = (0.38 + 0.00105 * route.distanceKm) * client.tariffFactor * yearFactor;
  if (rng.chance(0.08)) tarif *= rng.float(0.97, 1.06);
  const tarifUnit = round4(Math.min(0.95, Math.max(0.35, tarif)));
  const toll = route.tollShare > 0 ? Math.round(route.distanceKm * route.tollShare * vehicle.cfg.tollPerKm) : 0;

  const lastLeg = legs[legs.length - 1]!;
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
    lastUnload: lastLeg.unloadDate,
  };
}

/**
 * round2(a × b) in integer cents, exactly (half away from zero, as toCents),
 * for non-negative a with ≤ aDecimals decimals and b with ≤ bDecimals decimals.
 * Integer arithmetic: no float noise, and ~10× faster than toCents.
 */
function productCents(a: number, aDecimals: number, b: number, bDecimals: number): number {
  const ai = Math.round(a * 10 ** aDecimals);
  const bi = Math.round(b * 10 ** bDecimals);
  const shift = aDecimals + bDecimals - 2;
  if (shift <= 0) return ai * bi * 10 ** -shift;
  const scale = 10 ** shift;
  return Math.floor((ai * bi + scale / 2) / scale);
}

/** round2(base × rate) in cents for a base in cents and a rate with ≤ 4 decimals (= taxOn(base, rate)). */
function rateOfCents(baseC: number, rate: number): number {
  return Math.floor((baseC * Math.round(rate * 10_000) + 5_000) / 10_000);
}

const billedFreightCents = (loaded: number, tarifUnit: number): number => productCents(loaded, 0, tarifUnit, 4);

function merchandiseValue(world: World, leg: LegSketch): number {
  let cents = 0;
  for (const p of leg.products) cents += productCents(p.loaded, 0, world.settings.pricePerLitre[p.product.code] ?? 0, 2);
  return fromCents(cents);
}

/** Tolerance (percent) of a client and product, memoised per tenant. */
function toleranceOf(world: World, client: string, productCode: string): number {
  const key = `${client}|${productCode}`;
  let tol = world.tolerances.get(key);
  if (tol === undefined) {
    tol = toleranceFor(world.settings, client, productCode);
    world.tolerances.set(key, tol);
  }
  return tol;
}

// ---------------------------------------------------------------------------
// Plan: which trips are billed, which documents exist, in which order
// ---------------------------------------------------------------------------

const ROLE = {
  normal: 0,
  cancelled01: 1,
  cancelled02: 2,
  replacement: 3,
  ghost: 4,
  ghostCancelled03: 5,
} as const;

const NO_DOC = -1;
const BROKEN_LINK = -2;

interface Plan {
  docCount: number;
  /** ≥ 0: trip index; < 0: ghost −(g + 1). */
  docSource: Int32Array;
  docRole: Uint8Array;
  docDate: Float64Array;
  /** Original ↔ replacement of a cancelled pair; −1 otherwise. */
  docPartner: Int32Array;
  /** Per trip: doc index of its valid invoice, NO_DOC or BROKEN_LINK. */
  tripDoc: Int32Array;
}

function billingLagDays(rng: Rng, factor: number): number {
  const r = rng.next();
  const d = r < 0.3 ? 0 : r < 0.6 ? rng.int(1, 2) : r < 0.85 ? rng.int(3, 6) : r < 0.97 ? rng.int(7, 10) : rng.int(11, 30);
  return Math.round(d * factor);
}

/** Invoice instant `lagDays` Mexico City days after a delivery, in office hours, never before the delivery. */
function invoiceTimeAfter(delivery: number, lagDays: number, rng: Rng): number {
  let t = mxDayStartOf(delivery) + lagDays * DAY + Math.round(rng.float(8.5, 19.5) * HOUR);
  if (t < delivery + 15 * MIN) t = delivery + Math.round(rng.float(15, 240) * MIN);
  return t;
}

function buildPlan(world: World): Plan {
  const M = world.tripCount;
  const N = world.docTarget;
  const latestDoc = world.end - HOUR;

  const tripInv = new Float64Array(M).fill(NaN);
  const tripCancel = new Uint8Array(M); // 0 none, 1 motive 01, 2 motive 02
  const tripRepl = new Float64Array(M).fill(NaN);
  const broken = new Uint8Array(M);
  let needed = 0;
  for (let k = 0; k < M; k++) {
    const sk = tripSketch(world, k);
    const rng = new Rng(mix32(world.seed, STREAM.plan, k));
    if (rng.chance(0.005)) {
      broken[k] = 1;
      continue;
    }
    let inv = NaN;
    if (rng.chance(0.03)) {
      inv = Math.round(sk.createdAt + (sk.firstLoad - sk.createdAt) * rng.float(0.2, 0.9)); // billed at dispatch
    } else if (sk.lastUnload !== null && !rng.chance(0.055)) {
      inv = invoiceTimeAfter(sk.lastUnload, billingLagDays(rng, sk.client.billingLagFactor), rng);
    }
    if (!(inv <= latestDoc)) continue; // not billed (yet)
    tripInv[k] = inv;
    needed++;
    if (rng.chance(0.022)) {
      // The replacement goes out in office hours, from the same day to 5 days later.
      let repl = mxDayStartOf(inv) + rng.int(0, 5) * DAY + Math.round(rng.float(8.5, 19.5) * HOUR);
      if (repl < inv + 20 * MIN) repl = inv + Math.round(rng.float(20, 180) * MIN);
      if (repl <= latestDoc) {
        tripCancel[k] = rng.chance(0.7) ? 1 : 2;
        tripRepl[k] = repl;
        needed++;
      }
    }
  }

  // More billed trips than documents requested: leave a random subset unbilled.
  if (needed > N) {
    const billed: number[] = [];
    for (let k = 0; k < M; k++) if (!Number.isNaN(tripInv[k]!)) billed.push(k);
    new Rng(mix32(world.seed, STREAM.thinning)).shuffle(billed);
    for (const k of billed) {
      if (needed <= N) break;
      needed -= tripCancel[k] ? 2 : 1;
      tripInv[k] = NaN;
      tripCancel[k] = 0;
      tripRepl[k] = NaN;
    }
  }

  // Slots: one per document, before sorting by emission date.
  const slotDate = new Float64Array(N);
  const slotSource = new Int32Array(N);
  const slotRole = new Uint8Array(N);
  const slotPartner = new Int32Array(N).fill(-1);
  const tripSlot = new Int32Array(M).fill(NO_DOC);
  let s = 0;
  for (let k = 0; k < M; k++) {
    if (Number.isNaN(tripInv[k]!)) continue;
    if (tripCancel[k]) {
      slotDate[s] = tripInv[k]!;
      slotSource[s] = k;
      slotRole[s] = tripCancel[k] === 1 ? ROLE.cancelled01 : ROLE.cancelled02;
      slotPartner[s] = s + 1;
      slotDate[s + 1] = tripRepl[k]!;
      slotSource[s + 1] = k;
      slotRole[s + 1] = ROLE.replacement;
      slotPartner[s + 1] = s;
      tripSlot[k] = s + 1;
      s += 2;
    } else {
      slotDate[s] = tripInv[k]!;
      slotSource[s] = k;
      slotRole[s] = ROLE.normal;
      tripSlot[k] = s;
      s += 1;
    }
  }
  const ghosts = N - s;
  let cancel03Left = Math.min(ghosts, Math.round(N * 0.008));
  for (let g = 0; g < ghosts; g++) {
    const sk = ghostSketch(world, g);
    const rng = new Rng(mix32(world.seed, STREAM.ghostPlan, g));
    const delivered = sk.lastUnload ?? sk.firstLoad;
    let inv = invoiceTimeAfter(delivered, billingLagDays(rng, sk.client.billingLagFactor), rng);
    if (inv > latestDoc) inv = Math.max(delivered, latestDoc - rng.int(0, 48) * HOUR);
    // Selection sampling: exactly cancel03Left of the remaining ghosts are cancelled (motive 03).
    const cancelled = cancel03Left > 0 && rng.next() * (ghosts - g) < cancel03Left;
    if (cancelled) cancel03Left--;
    slotDate[s] = inv;
    slotSource[s] = -(g + 1);
    slotRole[s] = cancelled ? ROLE.ghostCancelled03 : ROLE.ghost;
    s++;
  }

  // Documents in emission order: ids and folios grow with time.
  const order = new Int32Array(N);
  for (let i = 0; i < N; i++) order[i] = i;
  order.sort((a, b) => slotDate[a]! - slotDate[b]! || a - b);
  const posOfSlot = new Int32Array(N);
  for (let j = 0; j < N; j++) posOfSlot[order[j]!] = j;

  const plan: Plan = {
    docCount: N,
    docSource: new Int32Array(N),
    docRole: new Uint8Array(N),
    docDate: new Float64Array(N),
    docPartner: new Int32Array(N).fill(-1),
    tripDoc: new Int32Array(M).fill(NO_DOC),
  };
  for (let j = 0; j < N; j++) {
    const slot = order[j]!;
    plan.docSource[j] = slotSource[slot]!;
    plan.docRole[j] = slotRole[slot]!;
    plan.docDate[j] = slotDate[slot]!;
    const partner = slotPartner[slot]!;
    plan.docPartner[j] = partner >= 0 ? posOfSlot[partner]! : -1;
  }
  for (let k = 0; k < M; k++) {
    if (broken[k]) plan.tripDoc[k] = BROKEN_LINK;
    else if (tripSlot[k]! >= 0) plan.tripDoc[k] = posOfSlot[tripSlot[k]!]!;
  }
  return plan;
}

// ---------------------------------------------------------------------------
// Ids
// ---------------------------------------------------------------------------

const docNo = (j: number): string => pad(j + 1, 6);
const docId = (world: World, j: number): string => `${world.prefix}-FD-${docNo(j)}`;
const tripId = (world: World, k: number): string => `${world.prefix}-VJ-${pad(k + 1, 6)}`;
const uuidOf = (world: World, j: number): string => new Rng(mix32(world.seed, STREAM.uuid, j)).uuid();
const nCedOf = (sk: TripSketch): string => (sk.ghost ? `CED-H${pad(sk.no, 6)}` : `CED-${pad(sk.no, 6)}`);
const nRelOf = (sk: TripSketch): string => `REL-${mondayYymmdd(sk.createdAt)}-${pad(sk.client.no, 2)}`;
const shipmentNo = (sk: TripSketch, leg: number): string => `EM-${sk.ghost ? 'H' : ''}${pad(sk.no, 6)}-${leg + 1}`;

// ---------------------------------------------------------------------------
// Trips
// ---------------------------------------------------------------------------

function placeDoc(p: PlaceInfo): TripPlace {
  return {
    id: p.id,
    nif: p.nif,
    name: p.name,
    address: {
      street: p.street,
      city: p.city.name,
      municipality: p.city.municipality,
      province: STATES[p.city.state] ?? p.city.state,
      state: p.city.state,
      country: 'MEX',
      zip: p.zip,
    },
  };
}

function buildTrip(world: World, plan: Plan, k: number): TripDocument {
  const sk = tripSketch(world, k);
  const link = plan.tripDoc[k]!;
  const idFinan = link >= 0 ? docId(world, link) : link === BROKEN_LINK ? `${world.prefix}-FD-L${pad(k + 1, 6)}` : null;
  const dest = world.destinations[sk.dest]!;
  const shipments: TripLeg[] = sk.legs.map((leg, i) => {
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
      products: leg.products.map((p) => ({
        desc: p.product.desc,
        code: p.product.code,
        unit: p.product.unit,
        loaded: p.loaded,
        offloaded: p.offloaded,
      })),
    };
  });
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
    shipments,
  };
}

function* tripsIterator(world: World, plan: Plan): Generator<TripDocument> {
  for (let k = 0; k < world.tripCount; k++) yield buildTrip(world, plan, k);
}

// ---------------------------------------------------------------------------
// Financial documents
// ---------------------------------------------------------------------------

interface ConceptDraft {
  code: string;
  kind: InvoiceConcept['kind'];
  desc: string;
  quantity: number;
  unitPrice: number;
  amountC: number;
  discountC: number;
  objetoImp: InvoiceConcept['objetoImp'];
  vatRate: number;
  vatC: number;
  retentionRate: number;
  retentionC: number;
}

const vatCents = rateOfCents;

function taxedDraft(
  code: string,
  kind: InvoiceConcept['kind'],
  desc: string,
  quantity: number,
  unitPrice: number,
  amountC: number,
  discountC: number,
  vatRate: number,
  retentionRate: number,
): ConceptDraft {
  const baseC = amountC - discountC;
  return {
    code,
    kind,
    desc,
    quantity,
    unitPrice,
    amountC,
    discountC,
    objetoImp: '02',
    vatRate,
    vatC: vatCents(baseC, vatRate),
    retentionRate,
    retentionC: retentionRate > 0 ? vatCents(baseC, retentionRate) : 0,
  };
}

/** One deliberate declared-≠-expected tax error on one concept (see file header). */
function injectTaxError(drafts: ConceptDraft[], rng: Rng, isCompany: boolean, retentionRate: number): void {
  const freight = drafts.filter((d) => d.kind === 'freight');
  const taxed = drafts.filter((d) => d.objetoImp === '02');
  if (taxed.length === 0) return;
  const delta = (max: number): number => (rng.chance(0.5) ? 1 : -1) * rng.int(50, max);
  const vatOff = (): void => {
    const c = rng.pick(taxed);
    let d = delta(6_000);
    if (c.vatC + d < 0) d = -d;
    c.vatC += d;
  };
  const retOff = (c: ConceptDraft): void => {
    let d = delta(2_500);
    if (c.retentionC + d < 0) d = -d;
    c.retentionC += d;
  };
  // Persons and the public RFC only get VAT errors: their retention stays 0 (an invariant the demo keeps).
  const kinds = isCompany ? ['vatOff', 'vatGross', 'retSubtotal', 'retOff', 'retMissing'] : ['vatOff', 'vatGross'];
  const kind = rng.weighted(kinds, isCompany ? [0.3, 0.15, 0.25, 0.2, 0.1] : [0.7, 0.3]);
  const f = freight[0];
  switch (kind) {
    case 'vatGross': {
      const c = taxed.find((x) => x.discountC > 0);
      if (c) c.vatC = vatCents(c.amountC, c.vatRate);
      else vatOff();
      return;
    }
    case 'retSubtotal': {
      // The naive "4% × SubTotal" (tolls, demurrage and shortage lines included), booked on the first freight line.
      if (!f) return vatOff();
      let subC = 0;
      for (const d of drafts) subC += d.amountC - d.discountC;
      let othersC = 0;
      for (const x of freight) if (x !== f) othersC += x.retentionC;
      const onFirst = vatCents(subC, retentionRate) - othersC;
      if (onFirst > f.retentionC) f.retentionC = onFirst;
      else retOff(f);
      return;
    }
    case 'retOff':
      if (f) retOff(f);
      else vatOff();
      return;
    case 'retMissing':
      if (f && f.retentionC > 0) for (const x of freight) x.retentionC = 0;
      else vatOff();
      return;
    default:
      vatOff();
  }
}

/** Bank hours (09:00–18:00 Mexico City) of the day of t, never before `notBefore`. */
function bankTime(t: number, rng: Rng, notBefore: number): number {
  const at = mxDayStartOf(t) + Math.round(rng.float(9, 18) * HOUR);
  return at < notBefore ? notBefore + rng.int(30, 240) * MIN : at;
}

interface RecordDraft {
  kind: PaymentRecord['kind'];
  date: number;
  amountC: number;
  canceled: boolean;
  uuid: string;
  /** For cancelled payment records: the uuid of the record re-issued in its place. */
  replacedBy?: string;
}

function buildDoc(world: World, plan: Plan, j: number): FinancialDocument {
  const src = plan.docSource[j]!;
  const role = plan.docRole[j]!;
  const invDate = plan.docDate[j]!;
  const sk = src >= 0 ? tripSketch(world, src) : ghostSketch(world, -src - 1);
  const rng = new Rng(mix32(world.seed, STREAM.doc, j));
  const settings = world.settings;
  const client = sk.client;
  const vatRate = settings.vatRate;
  const retRate = client.isCompany ? settings.retentionRate : 0;
  const origin = world.origins[sk.origin]!;
  const dest = world.destinations[sk.dest]!;
  const cancelledInvoice = role === ROLE.cancelled01 || role === ROLE.cancelled02 || role === ROLE.ghostCancelled03;

  // --- concepts -------------------------------------------------------------
  let discountPct = 0;
  if (client.discountPct > 0 && rng.chance(client.discountRate)) discountPct = client.discountPct;
  else if (rng.chance(0.04)) discountPct = rng.int(2, 10) / 100;

  const drafts: ConceptDraft[] = [];
  sk.legs.forEach((leg, i) => {
    const amountC = billedFreightCents(leg.loaded, sk.tarifUnit);
    const discountC = Math.round(amountC * discountPct);
    const what = leg.products.map((p) => p.product.short).join(' y ');
    drafts.push(
      taxedDraft(
        client.freightCode,
        'freight',
        `Flete en autotanque: ${what}, ${fmtInt(leg.loaded)} L, ${origin.city.name}, ${origin.city.state} a ${dest.city.name}, ${dest.city.state}. Embarque ${shipmentNo(sk, i)}`,
        leg.loaded,
        sk.tarifUnit,
        amountC,
        discountC,
        vatRate,
        retRate,
      ),
    );
  });
  if (sk.toll > 0) {
    const crossings = sk.legs.length;
    drafts.push(
      taxedDraft(
        CONCEPT_CODES.toll,
        'toll',
        `Reembolso de casetas de peaje, ${crossings} ${crossings === 1 ? 'viaje' : 'viajes'} ${origin.city.name} - ${dest.city.name}`,
        crossings,
        sk.toll,
        crossings * sk.toll * 100,
        0,
        vatRate,
        0,
      ),
    );
  }
  if (rng.chance(0.07)) {
    const days = rng.weighted([1, 2, 3], [0.65, 0.25, 0.1]);
    drafts.push(
      taxedDraft(
        CONCEPT_CODES.demurrage,
        'demurrage',
        `Estadías: ${days} ${days === 1 ? 'día' : 'días'} de espera en descarga, ${dest.name}`,
        days,
        client.demurrageRate,
        days * client.demurrageRate * 100,
        0,
        vatRate,
        client.retainsOnDemurrage ? retRate : 0,
      ),
    );
  }
  // Shortage indemnity lines (not subject to VAT), only for legs offloaded before the invoice.
  let faltC = 0;
  sk.legs.forEach((leg, i) => {
    if (leg.unloadDate === null || leg.unloadDate >= invDate || leg.loaded === 0) return;
    const pct = ((leg.loaded - leg.offloaded) / leg.loaded) * 100;
    let allowance = 0;
    const tols = leg.products.map((p) => toleranceOf(world, client.def.rfc, p.product.code));
    leg.products.forEach((p, pi) => (allowance += (tols[pi]! * p.loaded) / 100));
    const legTol = (allowance / leg.loaded) * 100;
    if (!(pct - legTol > 1e-9)) return;
    if (!rng.chance(pct > 0.5 ? 0.7 : 0.08)) return;
    leg.products.forEach((p, pi) => {
      const short = p.loaded - p.offloaded;
      const litres = settings.shrinkageRecoveryMode === 'all' ? short : Math.max(0, short - (tols[pi]! * p.loaded) / 100);
      const quantity = Math.round(litres * 100) / 100;
      if (quantity <= 0) return;
      const price = settings.pricePerLitre[p.product.code] ?? 0;
      const amountC = productCents(quantity, 2, price, 2);
      if (amountC <= 0) return;
      faltC += amountC;
      drafts.push({
        code: p.product.code,
        kind: 'shortage',
        desc: `Faltante de ${p.product.short} fuera de tolerancia: ${quantity} L (embarque ${shipmentNo(sk, i)}, merma ${pct.toFixed(2)}%, tolerancia ${round4(tols[pi]!)}%)`,
        quantity,
        unitPrice: price,
        amountC,
        discountC: 0,
        objetoImp: '01',
        vatRate: 0,
        vatC: 0,
        retentionRate: 0,
        retentionC: 0,
      });
    });
  });

  if (rng.chance(cancelledInvoice && role !== ROLE.ghostCancelled03 ? 0.35 : 0.02)) {
    injectTaxError(drafts, rng, client.isCompany, settings.retentionRate);
  }

  let subC = 0;
  let discC = 0;
  let vatC = 0;
  let retC = 0;
  let shipC = 0;
  let tollC = 0;
  const concepts: InvoiceConcept[] = drafts.map((d) => {
    subC += d.amountC;
    discC += d.discountC;
    vatC += d.vatC;
    retC += d.retentionC;
    if (d.kind === 'freight') shipC += d.amountC;
    if (d.kind === 'toll') tollC += d.amountC;
    return {
      code: d.code,
      kind: d.kind,
      desc: d.desc,
      quantity: d.quantity,
      unitPrice: d.unitPrice,
      amount: fromCents(d.amountC),
      discount: fromCents(d.discountC),
      objetoImp: d.objetoImp,
      vatRate: d.vatRate,
      vat: fromCents(d.vatC),
      retentionRate: d.retentionRate,
      retention: fromCents(d.retentionC),
    };
  });
  const totC = subC - discC + vatC - retC;
  if (totC < 0) throw new Error(`demo generator: negative total on document ${j}`); // cannot happen: retention ≤ 4% of a base ≤ SubTotal

  // --- identity and dates ---------------------------------------------------------
  const id = docId(world, j);
  const uuid = uuidOf(world, j);
  const timestamp = invDate + rng.int(0, 90_000);
  const certAt = invDate + rng.int(20, 480) * 1000;
  const paymentMethod: 'PUE' | 'PPD' = rng.chance(client.pueRate) ? 'PUE' : 'PPD';
  const end = world.end;

  // --- payments --------------------------------------------------------------------
  const records: RecordDraft[] = [];
  const canceled: CanceledRecord[] = [];
  let cancelSeq = 0;
  const cancelId = (): string => `${world.prefix}-CAN-${docNo(j)}-${++cancelSeq}`;
  if (!cancelledInvoice) {
    let remainingC = totC;
    if (paymentMethod === 'PPD' && rng.chance(0.03)) {
      const at = bankTime(invDate + rng.float(2, 25) * DAY, rng, invDate);
      const amountC = Math.round(totC * rng.float(0.01, 0.08));
      if (at <= end && amountC > 0) {
        records.push({ kind: 'creditNote', date: at, amountC, canceled: false, uuid: rng.uuid() });
        remainingC -= amountC;
      }
    }
    const schedule: { date: number; amountC: number }[] = [];
    if (paymentMethod === 'PUE') {
      schedule.push({ date: bankTime(invDate + rng.float(0, 3) * DAY, rng, invDate + 10 * MIN), amountC: remainingC });
    } else {
      const badDebt = rng.chance(client.badDebtRate);
      const n = 1 + rng.weightedIndex(client.installments);
      const due = invDate + client.creditDays * DAY;
      let at = due + rng.normal(client.payDelayMean, client.payDelaySd) * DAY;
      if (at < invDate + DAY) at = invDate + rng.float(1, 4) * DAY;
      if (badDebt) {
        // Never settled: sometimes one partial payment, then nothing.
        if (rng.chance(0.4)) schedule.push({ date: bankTime(at, rng, invDate + HOUR), amountC: Math.round(remainingC * rng.float(0.2, 0.6)) });
      } else {
        let left = remainingC;
        for (let i = 0; i < n && left > 0; i++) {
          const amountC = i === n - 1 ? left : Math.min(left, Math.round(left * rng.float(0.3, 0.6)));
          schedule.push({ date: bankTime(at, rng, invDate + HOUR), amountC });
          left -= amountC;
          at += rng.float(7, 30) * DAY;
        }
      }
    }
    for (const p of schedule) {
      if (p.date > end || p.amountC <= 0) continue;
      const good: RecordDraft = { kind: 'payment', date: p.date, amountC: p.amountC, canceled: false, uuid: rng.uuid() };
      if (rng.chance(0.02)) {
        // A wrong complement issued first, cancelled and re-issued (motive 01).
        const wrongAt = Math.max(invDate + MIN, p.date - Math.round(rng.float(1, 72) * HOUR));
        // A typo under the right amount keeps ImpSaldoInsoluto ≥ 0 on the wrong record too.
        const wrongC = Math.max(1, Math.round(p.amountC * rng.float(0.85, 0.995)));
        if (wrongAt < p.date) {
          records.push({ kind: 'payment', date: wrongAt, amountC: wrongC, canceled: true, uuid: rng.uuid(), replacedBy: good.uuid });
        }
      }
      records.push(good);
    }
  }
  records.sort((a, b) => a.date - b.date || Number(b.canceled) - Number(a.canceled));

  let balanceC = totC;
  let paidAny = false;
  const payments: PaymentRecord[] = records.map((r, i) => {
    const beforeC = balanceC;
    const appliedC = Math.min(r.amountC, beforeC);
    const afterC = r.canceled ? Math.max(0, beforeC - r.amountC) : beforeC - appliedC;
    if (!r.canceled) {
      balanceC = afterC;
      paidAny = true;
    } else {
      canceled.push({
        id: cancelId(),
        target: 'payment',
        uuid: r.uuid,
        date: Math.min(end, r.date + Math.round(rng.float(5, 50) * MIN)),
        motive: '01',
        replacementUuid: r.replacedBy ?? null,
      });
    }
    return {
      id: `${world.prefix}-${r.kind === 'creditNote' ? 'NC' : 'PAG'}-${docNo(j)}-${i + 1}`,
      kind: r.kind,
      uuid: r.uuid,
      date: r.date,
      amount: fromCents(r.canceled ? r.amountC : appliedC),
      balanceBefore: fromCents(beforeC),
      balanceAfter: fromCents(afterC),
      canceled: r.canceled,
    };
  });

  // --- invoice cancellation ----------------------------------------------------------
  if (cancelledInvoice) {
    const partner = plan.docPartner[j]!;
    let at: number;
    if (role === ROLE.ghostCancelled03) at = Math.min(end, invDate + Math.round(rng.float(0.5, 15) * DAY));
    else at = Math.min(end, plan.docDate[partner]! + Math.round(rng.float(2, 40) * MIN));
    canceled.push({
      id: cancelId(),
      target: 'invoice',
      uuid,
      date: at,
      motive: role === ROLE.cancelled01 ? '01' : role === ROLE.cancelled02 ? '02' : '03',
      replacementUuid: role === ROLE.cancelled01 ? uuidOf(world, partner) : null,
    });
  }
  canceled.sort((a, b) => a.date - b.date);

  const status = cancelledInvoice
    ? DOC_STATUS.cancelled
    : balanceC === 0
      ? DOC_STATUS.paid
      : paidAny
        ? world.profile.partialStatus
        : DOC_STATUS.invoiced;

  let last = Math.max(timestamp, certAt);
  for (const p of payments) last = Math.max(last, p.date);
  for (const c of canceled) last = Math.max(last, c.date);
  const lastUpdate = Math.min(Math.max(end, last), last + rng.int(0, 600) * 1000);

  const serie = world.profile.serie;
  const folio = `${serie}-${world.profile.folioStart + j}`;
  const invoiceNo = `${world.prefix}-INV-${docNo(j)}`;
  const r2 = (c: number): number => fromCents(c);
  return {
    _id: id,
    id,
    company: world.tenant,
    client: client.def.rfc,
    clientName: client.def.name,
    date: invDate,
    timestamp,
    lastUpdate: new Date(lastUpdate).toISOString(),
    iSub: r2(subC),
    iTot: r2(totC),
    iTax1: r2(vatC),
    iTax2: r2(retC),
    iDesc: r2(discC),
    iFalt: r2(faltC),
    tarif1: sk.tarifUnit,
    status,
    statusAuth: !cancelledInvoice && !rng.chance(0.01),
    ref1: nRelOf(sk),
    ref2: nCedOf(sk),
    invoice: {
      id: invoiceNo,
      num: folio,
      serie,
      uuid,
      date: invDate,
      satCertDate: new Date(certAt).toISOString(),
      paymentMethod,
      iSub: r2(subC),
      iTot: r2(totC),
      iTax1: r2(vatC),
      iTax2: r2(retC),
      ship: r2(shipC),
      toll: r2(tollC),
      source: rng.weighted(['TMS', 'portal', 'manual'], [0.8, 0.1, 0.1]),
      user: rng.pick(world.profile.users),
      pdf: `cfdi/${world.tenant}/${uuid}.pdf`,
      xml: `cfdi/${world.tenant}/${uuid}.xml`,
      concepts,
    },
    payments,
    canceled,
  };
}

function* docsIterator(world: World, plan: Plan): Generator<FinancialDocument> {
  for (let j = 0; j < plan.docCount; j++) yield buildDoc(world, plan, j);
}
