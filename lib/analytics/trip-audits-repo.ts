/**
 * Trip queries of the analytic audits (dispatch-to-bill, shrinkage recovery,
 * fleet utilization, unit economics); trips-repo.ts serves the trip list. Every pipeline starts with the tenant
 * and a leg-date `$elemMatch` (indexes tenant_leg_date / tenant_leg_unload)
 * and reshapes legs at once with `$map` into the few fields the audit reads
 * (portable: the embedded engine mishandles dotted inclusion projections
 * inside arrays), so only compact rows travel; groupings happen in the database.
 * A compact leg's `unloadDate` is its delivery instant (`legDeliveredAtExpr`):
 * null while the leg is in transit, so no audit reads an undelivered leg as offloaded.
 * Row-per-trip queries return rows as they arrive (AsyncIterable, a cursor of
 * AUDIT_BATCH_SIZE rows per round trip), never arrays:
 * the audit folds each row (lib/analytics accumulators), so the service's
 * memory does not grow with the number of trips in the period.
 */
import type { Db, Document, Filter } from 'mongodb';
import { COLLECTIONS, trips } from '../db/collections.ts';
import type { TripDocument } from '../model/trip-document.ts';
import type { ShrinkageTrip } from './shrinkage-recovery.ts';
import type { DeliveryRow } from './dispatch-to-bill.ts';
import type { UnitGroupRow } from './unit-economics.ts';
import type { UtilizationTrip, VehicleActivity } from './utilization.ts';
import {
  AUDIT_BATCH_SIZE,
  between,
  centsExpr,
  elementInRange,
  invoiceCancelledExpr,
  legDeliveredAtExpr,
  legLitres,
  mxnCentsExpr,
  sumOver,
} from '../db/pipeline.ts';

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

const offloadedIn = (tenant: string, q: TripScope & { start: number; end: number }): Document => ({
  $match: { ...scopeFilter(tenant, q), ...elementInRange('shipments', 'unloadDate', q.start, q.end) },
});

/**
 * The linked document (`idFinan` → financialDocs `_id`, an indexed lookup),
 * kept only when it belongs to the same tenant: a link can never reach another
 * tenant's document.
 */
const linkedInvoice = (tenant: string, shape: Document): Document[] => [
  { $lookup: { from: COLLECTIONS.financialDocs, localField: 'idFinan', foreignField: '_id', as: 'inv' } },
  { $addFields: { inv: { $map: { input: { $filter: { input: '$inv', as: 'd', cond: { $eq: ['$$d.company', tenant] } } }, as: 'd', in: shape } } } },
];

/**
 * Trips with a leg offloaded in [start, end] (delivered in the period when
 * their last leg is), each with compact legs (unload instant, totalFreight in
 * cents) and its linked invoice's date and cancellation: dispatch-to-bill.
 */
export function streamDeliveryRows(db: Db, tenant: string, q: TripScope & { start: number; end: number }, maxTimeMS: number): AsyncIterable<DeliveryRow> {
  const pipeline: Document[] = [
    offloadedIn(tenant, q),
    {
      $project: {
        client: 1,
        idFinan: { $ifNull: ['$idFinan', null] },
        legs: {
          $map: {
            input: { $ifNull: ['$shipments', []] },
            as: 'l',
            in: { unloadDate: legDeliveredAtExpr('$$l'), totalFreightC: centsExpr('$$l.pricing.totalFreight') },
          },
        },
      },
    },
    ...linkedInvoice(tenant, { date: '$$d.date', cancelled: invoiceCancelledExpr(undefined, '$$d.') }),
  ];
  return trips(db).aggregate<DeliveryRow>(pipeline, { maxTimeMS, batchSize: AUDIT_BATCH_SIZE });
}

/**
 * Same trips with each leg's products and the linked invoice's cancellation
 * and shortage concepts (what was recovered): the shrinkage recovery audit.
 */
export function streamShrinkageRows(db: Db, tenant: string, q: TripScope & { start: number; end: number }, maxTimeMS: number): AsyncIterable<ShrinkageTrip> {
  const pipeline: Document[] = [
    offloadedIn(tenant, q),
    {
      $project: {
        client: 1,
        idFinan: { $ifNull: ['$idFinan', null] },
        legs: {
          $map: {
            input: { $ifNull: ['$shipments', []] },
            as: 'l',
            in: {
              id: '$$l.id',
              shipment: '$$l.shipment',
              unloadDate: legDeliveredAtExpr('$$l'),
              products: { $ifNull: ['$$l.products', []] },
            },
          },
        },
      },
    },
    ...linkedInvoice(tenant, {
      _id: '$$d._id',
      cancelled: invoiceCancelledExpr(undefined, '$$d.'),
      rate: { $ifNull: ['$$d.exchangeRate', 1] },
      shortage: { $filter: { input: { $ifNull: ['$$d.invoice.concepts', []] }, as: 'c', cond: { $eq: ['$$c.kind', 'shortage'] } } },
    }),
    {
      $addFields: {
        inv: {
          $map: {
            input: '$inv',
            as: 'd',
            in: {
              _id: '$$d._id',
              cancelled: '$$d.cancelled',
              shortageC: sumOver('$$d.shortage', mxnCentsExpr('$$this.amount', '$$d.rate')),
              shortageLines: { $size: '$$d.shortage' },
              shortageLitres: sumOver('$$d.shortage', { $ifNull: ['$$this.quantity', 0] }),
            },
          },
        },
      },
    },
  ];
  return trips(db).aggregate<ShrinkageTrip>(pipeline, { maxTimeMS, batchSize: AUDIT_BATCH_SIZE });
}

/** Trips with a leg dated (YYYYMMDD, load day) in [fromYmd, toYmd], as the compact rows fleet utilization reads. */
export function streamUtilizationTrips(
  db: Db,
  tenant: string,
  q: TripScope & { fromYmd: number; toYmd: number },
  maxTimeMS: number,
): AsyncIterable<UtilizationTrip> {
  const pipeline: Document[] = [
    { $match: { ...scopeFilter(tenant, q), ...elementInRange('shipments', 'date', q.fromYmd, q.toYmd) } },
    {
      $project: {
        _id: 0,
        driverId: { $ifNull: ['$driver.id', ''] },
        driverName: { $ifNull: ['$driver.name', ''] },
        vehicleId: { $ifNull: ['$vehicle.id', ''] },
        plate: { $ifNull: ['$vehicle.plate', ''] },
        legs: {
          $map: {
            input: { $ifNull: ['$shipments', []] },
            as: 'l',
            in: {
              date: '$$l.date',
              loadDate: { $ifNull: ['$$l.loadDate', null] },
              unloadDate: legDeliveredAtExpr('$$l'),
              distanceKm: { $ifNull: ['$$l.distanceKm', 0] },
              billedFreight: { $ifNull: ['$$l.pricing.billedFreight', 0] },
              loaded: legLitres('l', 'loaded'),
              offloaded: legLitres('l', 'offloaded'),
            },
          },
        },
      },
    },
  ];
  return trips(db).aggregate<UtilizationTrip>(pipeline, { maxTimeMS, batchSize: AUDIT_BATCH_SIZE });
}

/**
 * Per vehicle with a leg dated in [fromYmd, toYmd]: the latest unload, load
 * and leg date over its legs, grouped in the database (one row per vehicle
 * travels); lib/analytics/utilization.ts turns them into a last activity. When
 * `toYmd` is today no leg can lie after it (instants are set when things
 * happen), so the cheap array-path `$max` serves; for a past window the legs
 * after it are filtered out first.
 */
export async function vehicleLastActivity(
  db: Db,
  tenant: string,
  q: { vehicle?: string; fromYmd: number; toYmd: number; windowEndsToday: boolean },
  maxTimeMS: number,
): Promise<VehicleActivity[]> {
  const legs = q.windowEndsToday ? '$shipments' : { $filter: { input: { $ifNull: ['$shipments', []] }, as: 'l', cond: { $lte: ['$$l.date', q.toYmd] } } };
  const pipeline: Document[] = [
    { $match: { ...scopeFilter(tenant, q.vehicle ? { vehicle: q.vehicle } : {}), ...elementInRange('shipments', 'date', q.fromYmd, q.toYmd) } },
    q.windowEndsToday
      ? {
          $project: {
            vehicle: '$vehicle.id',
            plate: '$vehicle.plate',
            u: { $max: '$shipments.unloadDate' },
            l: { $max: '$shipments.loadDate' },
            d: { $max: '$shipments.date' },
          },
        }
      : {
          $project: {
            vehicle: '$vehicle.id',
            plate: '$vehicle.plate',
            u: { $max: { $map: { input: legs, as: 'l', in: '$$l.unloadDate' } } },
            l: { $max: { $map: { input: legs, as: 'l', in: '$$l.loadDate' } } },
            d: { $max: { $map: { input: legs, as: 'l', in: '$$l.date' } } },
          },
        },
    { $group: { _id: '$vehicle', plate: { $max: '$plate' }, u: { $max: '$u' }, l: { $max: '$l' }, d: { $max: '$d' } } },
  ];
  const rows = await trips(db)
    .aggregate<{ _id: string; plate: string | null; u: number | null; l: number | null; d: number | null }>(pipeline, { maxTimeMS })
    .toArray();
  const num = (x: unknown): number | null => (typeof x === 'number' ? x : null);
  return rows.map((r) => ({ vehicle: r._id, plate: r.plate ?? '', lastUnload: num(r.u), lastLoad: num(r.l), lastLegDate: num(r.d) }));
}

export interface UnitEconomicsGroups {
  total: UnitGroupRow | null;
  byClient: (UnitGroupRow & { client: string })[];
  byVehicle: (UnitGroupRow & { vehicle: string; plate: string; config: string })[];
  byRoute: (UnitGroupRow & {
    originId: string;
    originName: string;
    originCity: string;
    originState: string;
    destinationId: string;
    destinationName: string;
    destinationCity: string;
    destinationState: string;
  })[];
}

/**
 * Legs delivered in [start, end] (a leg in transit has no offloaded litres yet), summed per trip in a `$project` (no
 * unwind), then grouped four ways in one `$facet`: overall, client, vehicle and
 * route (origin id → destination id). Revenue is Σ leg billedFreight in
 * integer cents; litres Σ product loaded / offloaded.
 */
export async function unitEconomicsGroups(
  db: Db,
  tenant: string,
  q: TripScope & { start: number; end: number },
  maxTimeMS: number,
): Promise<UnitEconomicsGroups> {
  const sums = {
    trips: { $sum: 1 },
    legs: { $sum: '$legs' },
    km: { $sum: '$km' },
    revenueC: { $sum: '$revenueC' },
    loaded: { $sum: '$loaded' },
    offloaded: { $sum: '$offloaded' },
  };
  const pipeline: Document[] = [
    { $match: { ...scopeFilter(tenant, q), ...elementInRange('shipments', 'unloadDate', q.start, q.end) } },
    {
      $project: {
        client: 1,
        vehicle: '$vehicle.id',
        plate: '$vehicle.plate',
        config: '$vehicle.config',
        originId: '$origin.id',
        originName: '$origin.name',
        originCity: '$origin.address.city',
        originState: '$origin.address.state',
        destinationId: '$destination.id',
        destinationName: '$destination.name',
        destinationCity: '$destination.address.city',
        destinationState: '$destination.address.state',
        l: {
          $map: {
            input: { $filter: { input: { $ifNull: ['$shipments', []] }, as: 'l', cond: between(legDeliveredAtExpr('$$l'), q.start, q.end) } },
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
    // An unload instant without every product's volume is not a delivery: such a trip has no leg here.
    { $match: { legs: { $gt: 0 } } },
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
              originName: { $max: '$originName' },
              originCity: { $max: '$originCity' },
              originState: { $max: '$originState' },
              destinationName: { $max: '$destinationName' },
              destinationCity: { $max: '$destinationCity' },
              destinationState: { $max: '$destinationState' },
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
        originId: id.o ?? '',
        originName: str(g.originName),
        originCity: str(g.originCity),
        originState: str(g.originState),
        destinationId: id.d ?? '',
        destinationName: str(g.destinationName),
        destinationCity: str(g.destinationCity),
        destinationState: str(g.destinationState),
        ...base(g),
      };
    }),
  };
}
