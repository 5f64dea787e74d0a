/**
 * Trip queries of the analytic audits. Every query starts with the tenant and
 * a leg-date `$elemMatch` (indexes tenant_leg_date / tenant_leg_unload) and
 * projects only the leg fields the audit reads. Plain `find` projections are
 * used where no grouping happens; groupings run as aggregation pipelines that
 * reshape arrays with `$map` (portable to the embedded engine).
 */
import type { Db, Document, Filter } from 'mongodb';
import { trips } from './collections.ts';
import type { TripDocument } from '../model/trip-document.ts';
import { between, centsExpr, legLitres, sumOver } from './pipeline.ts';

export interface TripScope {
  client?: string;
  vehicle?: string;
  driver?: string;
}

function scopeFilter(tenant: string, s: TripScope): Filter<TripDocument> {
  const q: Filter<TripDocument> = { company: tenant };
  if (s.client !== undefined) q.client = s.client;
  if (s.vehicle !== undefined) q['vehicle.id'] = s.vehicle;
  if (s.driver !== undefined) q['driver.id'] = s.driver;
  return q;
}

/** A projected trip: the fields named in the projection are present, the rest absent. */
export type ProjectedTrip = TripDocument;

/**
 * Trips with a leg offloaded in [start, end] (delivered in the period when
 * their last leg is): for dispatch-to-bill and shrinkage recovery.
 */
export async function findTripsOffloadedIn(db: Db, tenant: string, q: TripScope & { start: number; end: number }, maxTimeMS: number): Promise<ProjectedTrip[]> {
  const filter: Filter<TripDocument> = { ...scopeFilter(tenant, q), shipments: { $elemMatch: { unloadDate: { $gte: q.start, $lte: q.end } } } };
  const projection = {
    _id: 1, client: 1, idFinan: 1, createdAt: 1, 'vehicle.id': 1, 'driver.id': 1,
    'shipments.id': 1, 'shipments.shipment': 1, 'shipments.date': 1, 'shipments.loadDate': 1, 'shipments.unloadDate': 1,
    'shipments.pricing.totalFreight': 1, 'shipments.products': 1,
  };
  return trips(db).find(filter, { projection, maxTimeMS }).toArray();
}

/** Trips with a leg loaded (leg date YYYYMMDD) in [fromYmd, toYmd]: for fleet utilization. */
export async function findTripsWithLegDates(db: Db, tenant: string, q: TripScope & { fromYmd: number; toYmd: number }, maxTimeMS: number): Promise<ProjectedTrip[]> {
  const filter: Filter<TripDocument> = { ...scopeFilter(tenant, q), shipments: { $elemMatch: { date: { $gte: q.fromYmd, $lte: q.toYmd } } } };
  const projection = {
    _id: 1, 'driver.id': 1, 'driver.name': 1, 'vehicle.id': 1, 'vehicle.plate': 1,
    'shipments.date': 1, 'shipments.loadDate': 1, 'shipments.unloadDate': 1, 'shipments.distanceKm': 1,
    'shipments.pricing.billedFreight': 1, 'shipments.products.loaded': 1, 'shipments.products.offloaded': 1,
  };
  return trips(db).find(filter, { projection, maxTimeMS }).toArray();
}

export interface VehicleActivityRow {
  vehicle: string;
  plate: string;
  /** Latest unload (else load) instant of a leg dated in the window; null when none has an instant. */
  lastInstant: number | null;
  /** Latest leg date (YYYYMMDD) of legs without any instant. */
  lastDayWithoutInstant: number | null;
}

/** Per vehicle with a leg dated in [fromYmd, toYmd]: its latest activity. Grouped in the database (one row per vehicle). */
export async function vehicleLastActivity(db: Db, tenant: string, q: { vehicle?: string; fromYmd: number; toYmd: number }, maxTimeMS: number): Promise<VehicleActivityRow[]> {
  const pipeline: Document[] = [
    { $match: { ...scopeFilter(tenant, q.vehicle ? { vehicle: q.vehicle } : {}), shipments: { $elemMatch: { date: { $gte: q.fromYmd, $lte: q.toYmd } } } } },
    {
      $project: {
        vehicle: '$vehicle.id',
        plate: '$vehicle.plate',
        legs: {
          $map: {
            input: { $filter: { input: '$shipments', as: 'l', cond: between('$$l.date', q.fromYmd, q.toYmd) } },
            as: 'l',
            in: { t: { $ifNull: ['$$l.unloadDate', '$$l.loadDate'] }, d: '$$l.date' },
          },
        },
      },
    },
    { $unwind: '$legs' },
    {
      $group: {
        _id: '$vehicle',
        plate: { $max: '$plate' },
        lastInstant: { $max: '$legs.t' },
        lastDayWithoutInstant: { $max: { $cond: [{ $gt: ['$legs.t', null] }, null, '$legs.d'] } },
      },
    },
  ];
  const rows = await trips(db).aggregate<{ _id: string; plate: string; lastInstant: number | null; lastDayWithoutInstant: number | null }>(pipeline, { maxTimeMS }).toArray();
  return rows.map((r) => ({ vehicle: r._id, plate: r.plate ?? '', lastInstant: r.lastInstant ?? null, lastDayWithoutInstant: r.lastDayWithoutInstant ?? null }));
}

export interface UnitGroupRow {
  trips: number;
  legs: number;
  km: number;
  revenueC: number;
  loaded: number;
  offloaded: number;
}

export interface UnitEconomicsGroups {
  total: UnitGroupRow | null;
  byClient: (UnitGroupRow & { client: string })[];
  byVehicle: (UnitGroupRow & { vehicle: string; plate: string; config: string })[];
  byRoute: (UnitGroupRow & {
    originId: string; originName: string; originCity: string; originState: string;
    destinationId: string; destinationName: string; destinationCity: string; destinationState: string;
  })[];
}

/**
 * Legs offloaded in [start, end], summed per trip in a `$project` (no
 * unwind), then grouped four ways in one `$facet`: overall, client, vehicle and
 * route (origin id → destination id). Revenue is Σ leg billedFreight in
 * integer cents; litres Σ product loaded / offloaded.
 */
export async function unitEconomicsGroups(db: Db, tenant: string, q: TripScope & { start: number; end: number }, maxTimeMS: number): Promise<UnitEconomicsGroups> {
  const sums = { trips: { $sum: 1 }, legs: { $sum: '$legs' }, km: { $sum: '$km' }, revenueC: { $sum: '$revenueC' }, loaded: { $sum: '$loaded' }, offloaded: { $sum: '$offloaded' } };
  const pipeline: Document[] = [
    { $match: { ...scopeFilter(tenant, q), shipments: { $elemMatch: { unloadDate: { $gte: q.start, $lte: q.end } } } } },
    {
      $project: {
        client: 1,
        vehicle: '$vehicle.id', plate: '$vehicle.plate', config: '$vehicle.config',
        originId: '$origin.id', originName: '$origin.name', originCity: '$origin.address.city', originState: '$origin.address.state',
        destinationId: '$destination.id', destinationName: '$destination.name', destinationCity: '$destination.address.city', destinationState: '$destination.address.state',
        l: {
          $map: {
            input: { $filter: { input: '$shipments', as: 'l', cond: between('$$l.unloadDate', q.start, q.end) } },
            as: 'l',
            in: {
              km: { $ifNull: ['$$l.distanceKm', 0] },
              revenueC: centsExpr('$$l.pricing.billedFreight'),
              loaded: legLitres('l', 'loaded'),
              offloaded: legLitres('l', 'offloaded'),
            },
          },
        },
      },
    },
    {
      $addFields: {
        legs: { $size: '$l' },
        km: sumOver('$l', '$$this.km'),
        revenueC: sumOver('$l', '$$this.revenueC'),
        loaded: sumOver('$l', '$$this.loaded'),
        offloaded: sumOver('$l', '$$this.offloaded'),
      },
    },
    { $project: { l: 0 } },
    {
      $facet: {
        total: [{ $group: { _id: null, ...sums } }],
        byClient: [{ $group: { _id: '$client', ...sums } }],
        byVehicle: [{ $group: { _id: '$vehicle', plate: { $max: '$plate' }, config: { $max: '$config' }, ...sums } }],
        byRoute: [
          {
            $group: {
              _id: { o: '$originId', d: '$destinationId' },
              originName: { $max: '$originName' }, originCity: { $max: '$originCity' }, originState: { $max: '$originState' },
              destinationName: { $max: '$destinationName' }, destinationCity: { $max: '$destinationCity' }, destinationState: { $max: '$destinationState' },
              ...sums,
            },
          },
        ],
      },
    },
  ];
  type G = UnitGroupRow & { _id: unknown } & Record<string, unknown>;
  const [facet] = await trips(db).aggregate<{ total: G[]; byClient: G[]; byVehicle: G[]; byRoute: G[] }>(pipeline, { maxTimeMS }).toArray();
  const base = (g: G): UnitGroupRow => ({ trips: g.trips, legs: g.legs, km: g.km, revenueC: g.revenueC, loaded: g.loaded, offloaded: g.offloaded });
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  const total = facet?.total[0];
  return {
    total: total ? base(total) : null,
    byClient: (facet?.byClient ?? []).map((g) => ({ client: str(g._id), ...base(g) })),
    byVehicle: (facet?.byVehicle ?? []).map((g) => ({ vehicle: str(g._id), plate: str(g.plate), config: str(g.config), ...base(g) })),
    byRoute: (facet?.byRoute ?? []).map((g) => {
      const id = g._id as { o?: string; d?: string };
      return {
        originId: id.o ?? '', originName: str(g.originName), originCity: str(g.originCity), originState: str(g.originState),
        destinationId: id.d ?? '', destinationName: str(g.destinationName), destinationCity: str(g.destinationCity), destinationState: str(g.destinationState),
        ...base(g),
      };
    }),
  };
}
