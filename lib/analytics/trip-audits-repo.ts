/**
 * Trip queries of the analytic audits (dispatch-to-bill, shrinkage recovery,
 * fleet utilization, unit economics); trips-repo.ts serves the trip list. Every pipeline starts with the tenant
 * and a leg-date `$elemMatch` (indexes tenant_leg_date_created / tenant_leg_unload_created)
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
import type { StoredDeliveryRow } from './dispatch-to-bill-day.ts';
import { fromMilli, type KmGrouping, type UnitEconomicsGroups, type UnitGroupRow } from './unit-economics.ts';
import type { UnitTrip } from './unit-economics-day.ts';
import type { TripKeys } from './trip-costs.ts';
import type { VehicleActivity } from './utilization.ts';
import type { FleetTrip } from './fleet-day-rollup.ts';
import { creditedUnloadDate, MAX_LEG_SPAN_DAYS, UNCAPPED_LEG_MS } from '../trips/leg-active-days.ts';
import { mxAddDays, mxDayEnd, mxDayStart } from '../time/mexico-city.ts';
import {
  AUDIT_BATCH_SIZE,
  between,
  centsExpr,
  elementInRange,
  invoiceCancelledExpr,
  legDeliveredAtExpr,
  legLitres,
  legLitresMilli,
  milliExpr,
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
 * tenant's document. The tenant is a `$literal`: in an expression a string beginning with `$` is a field.
 */
const linkedInvoice = (tenant: string, shape: Document): Document[] => [
  { $lookup: { from: COLLECTIONS.financialDocs, localField: 'idFinan', foreignField: '_id', as: 'inv' } },
  {
    $addFields: { inv: { $map: { input: { $filter: { input: '$inv', as: 'd', cond: { $eq: ['$$d.company', { $literal: tenant }] } } }, as: 'd', in: shape } } },
  },
];

/**
 * Trips with a leg offloaded in [start, end] (delivered in the period when
 * their last leg is), each with compact legs (unload instant, totalFreight in
 * cents) and its linked invoice's date and cancellation: dispatch-to-bill.
 * `withStored` adds `_id` and each leg's stored unload instant (`unloads`): the kept days
 * (lib/analytics/dispatch-to-bill-day.ts) place a trip in transit on those days.
 */
function deliveryRowsPipeline(tenant: string, q: TripScope & { start: number; end: number }, withStored: boolean): Document[] {
  return [
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
        ...(withStored ? { unloads: { $map: { input: { $ifNull: ['$shipments', []] }, as: 'l', in: { $ifNull: ['$$l.unloadDate', null] } } } } : {}),
      },
    },
    ...linkedInvoice(tenant, { date: '$$d.date', cancelled: invoiceCancelledExpr(undefined, '$$d.') }),
  ];
}

export function streamDeliveryRows(db: Db, tenant: string, q: TripScope & { start: number; end: number }, maxTimeMS: number): AsyncIterable<DeliveryRow> {
  return trips(db).aggregate<DeliveryRow>(deliveryRowsPipeline(tenant, q, false), { maxTimeMS, batchSize: AUDIT_BATCH_SIZE });
}

/** The same rows with each leg's stored unload instant: every trip with a leg unloaded in [start, end], delivered or not. */
export function streamStoredDeliveryRows(db: Db, tenant: string, q: { start: number; end: number }, maxTimeMS: number): AsyncIterable<StoredDeliveryRow> {
  return trips(db).aggregate<StoredDeliveryRow>(deliveryRowsPipeline(tenant, q, true), { maxTimeMS, batchSize: AUDIT_BATCH_SIZE });
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

/**
 * The legs of a tenant's trips, streamed: all of them (a rebuild's delivery days), or those linked
 * (`idFinan`, index tenant_idfinan) to these documents, at most 1,000. Whole legs, as the delivery
 * rule reads them (tripOffloadDate): the rule as a `$map` expression cost the engine more than
 * sending the legs.
 */
export function streamTripLegs(db: Db, tenant: string, q: { linkedTo?: readonly string[] }, maxTimeMS: number): AsyncIterable<Pick<TripDocument, 'shipments'>> {
  const filter: Filter<TripDocument> = q.linkedTo ? { company: tenant, idFinan: { $in: [...q.linkedTo] } } : { company: tenant };
  return trips(db).find(filter, { projection: { _id: 0, shipments: 1 }, maxTimeMS, batchSize: 2000 });
}

/** The compact legs of fleet utilization (streamUtilizationTrips) with, per leg, the stored unload and load instants. */
const fleetTripProjection: Document = {
  $project: {
    _id: 1,
    client: { $ifNull: ['$client', ''] },
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
    raw: {
      $map: {
        input: { $ifNull: ['$shipments', []] },
        as: 'l',
        in: { unloadDate: { $ifNull: ['$$l.unloadDate', null] }, loadDate: { $ifNull: ['$$l.loadDate', null] } },
      },
    },
  },
};

/**
 * The tenant's trips (scoped) with a leg that may be active, or is dated, on a day of
 * [fromDay, toDay]: a leg dated in it, loaded in it, loaded up to 31 days before and offloaded on
 * or after its first day (a leg is active at most 31 days after loading), or offloaded in it.
 * Four indexed queries (tenant_leg_date_created, tenant_leg_load_created, then
 * tenant_leg_load_created or tenant_leg_unload_created, then tenant_leg_unload_created), disjoint:
 * every trip whose legs' active days (lib/trips/leg-active-days.ts) meet the days, once, as fleet
 * utilization counts them.
 *
 * The legs loaded before the days and still on the road on the first are read by the narrower of
 * two ranges: those loaded in the 31 days before (~88,000 trips at 1M/1M, to find a few hundred),
 * or, when the days began less than 31 days before `now`, those offloaded since they began (a
 * recorded delivery is never in the future; a Carta Porte's planned arrival can be days ahead, a few
 * more trips), which for a write of today is about today's deliveries. Both find the same trips.
 */
export async function* streamTripsTouchingDays(
  db: Db,
  tenant: string,
  q: TripScope & { fromDay: string; toDay: string; now?: number },
  maxTimeMS: number,
): AsyncIterable<FleetTrip> {
  const scope = scopeFilter(tenant, q);
  const fromStart = mxDayStart(q.fromDay);
  const toEnd = mxDayEnd(q.toDay);
  const dated = { $gte: ymdNum(q.fromDay), $lte: ymdNum(q.toDay) };
  const loadedBefore = { $gte: mxDayStart(mxAddDays(q.fromDay, -MAX_LEG_SPAN_DAYS)), $lt: fromStart };
  const loadedIn = { $gte: fromStart, $lte: toEnd };
  // A leg loaded before the days is active on one of them only if it was offloaded on or after the first
  // (lib/trips/leg-active-days.ts). Without that condition one day read every trip loaded in the 31 days before it.
  const spanning = { loadDate: loadedBefore, unloadDate: { $gte: fromStart } };
  const byUnload = (q.now ?? Date.now()) - fromStart < MAX_LEG_SPAN_DAYS * 86_400_000;
  // Disjoint: each query leaves out the trips an earlier one returns, so every trip comes once.
  const datedLeg = { shipments: { $elemMatch: { date: dated } } };
  const loadedInLeg = { shipments: { $elemMatch: { loadDate: loadedIn } } };
  const spanningLeg = { shipments: { $elemMatch: spanning } };
  const conditions: Document[] = [
    elementInRange('shipments', 'date', dated.$gte, dated.$lte),
    { ...elementInRange('shipments', 'loadDate', loadedIn.$gte, loadedIn.$lte), $nor: [datedLeg] },
    {
      // The top-level range is the index read; the leg's own conditions are in $elemMatch.
      ...(byUnload ? { 'shipments.unloadDate': spanning.unloadDate } : { 'shipments.loadDate': loadedBefore }),
      ...spanningLeg,
      $nor: [datedLeg, loadedInLeg],
    },
    {
      ...elementInRange('shipments', 'unloadDate', fromStart, toEnd),
      $nor: [datedLeg, loadedInLeg, spanningLeg],
    },
  ];
  for (const c of conditions)
    yield* trips(db).aggregate<FleetTrip>([{ $match: { ...scope, ...c } }, fleetTripProjection], { maxTimeMS, batchSize: AUDIT_BATCH_SIZE });
}

/** streamTripsTouchingDays, held (the days of one run of kept days). */
export async function tripsTouchingDays(
  db: Db,
  tenant: string,
  q: TripScope & { fromDay: string; toDay: string; now?: number },
  maxTimeMS: number,
): Promise<FleetTrip[]> {
  const out: FleetTrip[] = [];
  for await (const t of streamTripsTouchingDays(db, tenant, q, maxTimeMS)) out.push(t);
  return out;
}

/** 'YYYY-MM-DD' → YYYYMMDD. */
const ymdNum = (date: string): number => Number(date.replace(/-/g, ''));

/**
 * Per vehicle with a leg dated in [fromYmd, toYmd]: the latest unload, load and leg date over its
 * legs, grouped in the database (one row per vehicle travels); lib/analytics/utilization.ts turns
 * them into a last activity. A leg's unloading instant counts as its activity ends as the kept days
 * read it (creditedUnloadDate): a mistyped one past the MAX_LEG_SPAN_DAYS days credited from
 * loading ends with the last of them, so a typo does not keep a vehicle "active" for months. Only
 * the legs longer than UNCAPPED_LEG_MS (rare: mistyped) travel one by one to be capped here; the
 * others are grouped as they are. When `toYmd` is today no leg can lie after it (instants are set
 * when things happen); for a past window the legs dated after it are filtered out first.
 */
export async function vehicleLastActivity(
  db: Db,
  tenant: string,
  q: { vehicle?: string; fromYmd: number; toYmd: number; windowEndsToday: boolean },
  maxTimeMS: number,
): Promise<VehicleActivity[]> {
  const legs = q.windowEndsToday
    ? { $ifNull: ['$shipments', []] }
    : { $filter: { input: { $ifNull: ['$shipments', []] }, as: 'l', cond: { $lte: ['$$l.date', q.toYmd] } } };
  const long: Document = {
    $and: [
      { $ne: [{ $ifNull: ['$$l.unloadDate', null] }, null] },
      { $ne: [{ $ifNull: ['$$l.loadDate', null] }, null] },
      { $gt: ['$$l.unloadDate', { $add: ['$$l.loadDate', UNCAPPED_LEG_MS] }] },
    ],
  };
  const pipeline: Document[] = [
    { $match: { ...scopeFilter(tenant, q.vehicle ? { vehicle: q.vehicle } : {}), ...elementInRange('shipments', 'date', q.fromYmd, q.toYmd) } },
    { $project: { vehicle: '$vehicle.id', plate: '$vehicle.plate', legs } },
    {
      $project: {
        vehicle: 1,
        plate: 1,
        u: { $max: { $map: { input: '$legs', as: 'l', in: { $cond: [long, null, { $ifNull: ['$$l.unloadDate', null] }] } } } },
        l: { $max: { $map: { input: '$legs', as: 'l', in: '$$l.loadDate' } } },
        d: { $max: { $map: { input: '$legs', as: 'l', in: '$$l.date' } } },
        long: { $map: { input: { $filter: { input: '$legs', as: 'l', cond: long } }, as: 'l', in: { l: '$$l.loadDate', u: '$$l.unloadDate' } } },
      },
    },
    { $group: { _id: '$vehicle', plate: { $max: '$plate' }, u: { $max: '$u' }, l: { $max: '$l' }, d: { $max: '$d' }, long: { $addToSet: '$long' } } },
  ];
  const rows = await trips(db)
    .aggregate<{ _id: string; plate: string | null; u: unknown; l: unknown; d: unknown; long?: unknown[] }>(pipeline, { maxTimeMS })
    .toArray();
  const num = (x: unknown): number | null => (typeof x === 'number' ? x : null);
  return rows.map((r) => {
    let u = num(r.u);
    // Per trip, its long legs (an object each: the embedded engine does not evaluate an array literal's expressions); a
    // set, so the trips without one travel as a single empty array.
    for (const legsOfTrip of r.long ?? [])
      for (const x of Array.isArray(legsOfTrip) ? (legsOfTrip as { l?: unknown; u?: unknown }[]) : []) {
        const capped = creditedUnloadDate(num(x?.l), num(x?.u));
        if (capped !== null) u = u === null ? capped : Math.max(u, capped);
      }
    return { vehicle: r._id, plate: r.plate ?? '', lastUnload: u, lastLoad: num(r.l), lastLegDate: num(r.d) };
  });
}

/** What unit economics groups a trip by (client, truck, driver, lane), projected from the trip. */
const UNIT_GROUPING_FIELDS = {
  client: 1,
  vehicle: '$vehicle.id',
  plate: '$vehicle.plate',
  config: '$vehicle.config',
  driver: '$driver.id',
  driverName: '$driver.name',
  originId: '$origin.id',
  originName: '$origin.name',
  originCity: '$origin.address.city',
  originState: '$origin.address.state',
  destinationId: '$destination.id',
  destinationName: '$destination.name',
  destinationCity: '$destination.address.city',
  destinationState: '$destination.address.state',
} as const;

/**
 * Stages of the unit-economics queries: the trips with a leg delivered in [start, end] (a leg in
 * transit has no offloaded litres yet), each summed over those legs in a `$project` (no unwind).
 * km and litres are summed in integer thousandths (exact in any order; docs/domain.md), read back
 * as km and litres by `fromMilli`.
 */
function deliveredLegSums(tenant: string, q: TripScope & { start: number; end: number }, ids?: readonly string[]): Document[] {
  return [
    { $match: { ...scopeFilter(tenant, q), ...(ids ? { _id: { $in: [...ids] } } : {}), ...elementInRange('shipments', 'unloadDate', q.start, q.end) } },
    {
      $project: {
        ...UNIT_GROUPING_FIELDS,
        l: {
          $map: {
            input: { $filter: { input: { $ifNull: ['$shipments', []] }, as: 'l', cond: between(legDeliveredAtExpr('$$l'), q.start, q.end) } },
            as: 'l',
            in: {
              km: milliExpr('$$l.distanceKm'),
              revenueC: centsExpr('$$l.pricing.billedFreight'),
              tollC: centsExpr('$$l.pricing.toll'),
              loaded: legLitresMilli('l', 'loaded'),
              offloaded: legLitresMilli('l', 'offloaded'),
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
        tollC: sumOver('$l', '$$this.tollC'),
        loaded: sumOver('$l', '$$this.loaded'),
        offloaded: sumOver('$l', '$$this.offloaded'),
      },
    },
    // An unload instant without every product's volume is not a delivery: such a trip has no leg here.
    { $match: { legs: { $gt: 0 } } },
    { $project: { l: 0 } },
  ];
}

const KM_FACETS = { client: 'clientVehicle', route: 'routeVehicle', driver: 'driverVehicle' } as const satisfies Record<KmGrouping, string>;

/**
 * Legs delivered in [start, end] (a leg in transit has no offloaded litres yet), summed per trip in a `$project` (no
 * unwind), then grouped in one `$facet`: overall, client, vehicle, driver and
 * route (origin id → destination id), and the km of each client, route and driver on each
 * vehicle (what a vehicle's costs are shared by). Revenue is Σ leg billedFreight in
 * integer cents, tolls Σ leg toll; litres Σ product loaded / offloaded.
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
    tollC: { $sum: '$tollC' },
  };
  const kmOn = (key: unknown): Document[] => [{ $group: { _id: { k: key, v: '$vehicle' }, km: { $sum: '$km' } } }];
  const pipeline: Document[] = [
    ...deliveredLegSums(tenant, q),
    {
      $facet: {
        total: [{ $group: { _id: null, ...sums } }],
        byClient: [{ $group: { _id: '$client', ...sums } }],
        byVehicle: [{ $group: { _id: '$vehicle', plate: { $max: '$plate' }, config: { $max: '$config' }, ...sums } }],
        byDriver: [{ $group: { _id: '$driver', name: { $max: '$driverName' }, ...sums } }],
        clientVehicle: kmOn('$client'),
        routeVehicle: kmOn({ $concat: [{ $ifNull: ['$originId', ''] }, '→', { $ifNull: ['$destinationId', ''] }] }),
        driverVehicle: kmOn('$driver'),
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
  type K = { _id: { k?: unknown; v?: unknown }; km: number };
  const [facet] = await trips(db)
    .aggregate<{
      total: G[];
      byClient: G[];
      byVehicle: G[];
      byDriver: G[];
      byRoute: G[];
      clientVehicle: K[];
      routeVehicle: K[];
      driverVehicle: K[];
    }>(pipeline, { maxTimeMS })
    .toArray();
  const base = (g: G): UnitGroupRow => ({
    trips: g.trips,
    legs: g.legs,
    km: fromMilli(g.km),
    revenueC: g.revenueC,
    loaded: fromMilli(g.loaded),
    offloaded: fromMilli(g.offloaded),
    tollC: g.tollC ?? 0,
  });
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  const total = facet?.total[0];
  return {
    total: total ? base(total) : null,
    byClient: (facet?.byClient ?? []).map((g) => ({ client: str(g._id), ...base(g) })),
    byVehicle: (facet?.byVehicle ?? []).map((g) => ({ vehicle: str(g._id), plate: str(g.plate), config: str(g.config), ...base(g) })),
    byDriver: (facet?.byDriver ?? []).map((g) => ({ driver: str(g._id), name: str(g.name), ...base(g) })),
    kmOnVehicles: (keys) => {
      const of = (grouping: KmGrouping) =>
        (facet?.[KM_FACETS[grouping]] ?? [])
          .filter((g) => keys[grouping].has(str(g._id.k)))
          .map((g) => ({ key: str(g._id.k), vehicle: str(g._id.v), km: fromMilli(g.km) }));
      return { client: of('client'), route: of('route'), driver: of('driver') };
    },
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

/**
 * Tenant-wide delivered km of the period and per vehicle: what costs are spread by. Each vehicle with
 * every plate its delivered trips of the period carried (`plates`, sorted: each one names it, unless
 * another vehicle carried it too) and the greatest (`plate`, the label).
 */
export async function deliveredKmByVehicle(
  db: Db,
  tenant: string,
  q: { start: number; end: number },
  maxTimeMS: number,
): Promise<{ vehicle: string; plate: string; plates: string[]; km: number }[]> {
  const pipeline: Document[] = [
    ...deliveredLegSums(tenant, q),
    { $group: { _id: '$vehicle', plate: { $max: '$plate' }, plates: { $addToSet: '$plate' }, km: { $sum: '$km' } } },
  ];
  const rows = await trips(db).aggregate<{ _id: unknown; plate: unknown; plates?: unknown[]; km: number }>(pipeline, { maxTimeMS }).toArray();
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  return rows.map((r) => ({
    vehicle: str(r._id),
    plate: str(r.plate),
    plates: [...new Set((r.plates ?? []).filter((p): p is string => typeof p === 'string' && p !== ''))].sort(),
    km: fromMilli(r.km),
  }));
}

/** These trips (the tenant's, with a leg delivered in [start, end]): their groups and delivered km. */
export async function deliveredTripKeys(
  db: Db,
  tenant: string,
  ids: readonly string[],
  q: { start: number; end: number },
  maxTimeMS: number,
): Promise<TripKeys[]> {
  if (!ids.length) return [];
  const pipeline: Document[] = [...deliveredLegSums(tenant, q, [...new Set(ids)])];
  const rows = await trips(db).aggregate<Record<string, unknown> & { km: number }>(pipeline, { maxTimeMS }).toArray();
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  return rows.map((r) => ({
    id: str(r._id),
    client: str(r.client),
    vehicle: str(r.vehicle),
    driver: str(r.driver),
    routeKey: `${str(r.originId)}→${str(r.destinationId)}`,
    km: fromMilli(r.km),
  }));
}

/**
 * The trips with a leg unloaded in [start, end] (the days of unit economics being kept), each with
 * its grouping fields and every leg (delivery instant, km and litres in thousandths, freight and
 * toll in cents), as they arrive: a day keeps the legs delivered on it and the trip's next delivery day.
 */
export async function* streamUnitTrips(db: Db, tenant: string, q: { start: number; end: number }, maxTimeMS: number): AsyncIterable<UnitTrip> {
  const pipeline: Document[] = [
    { $match: { company: tenant, ...elementInRange('shipments', 'unloadDate', q.start, q.end) } },
    {
      $project: {
        _id: 0,
        ...UNIT_GROUPING_FIELDS,
        legs: {
          $map: {
            input: { $ifNull: ['$shipments', []] },
            as: 'l',
            in: {
              at: legDeliveredAtExpr('$$l'),
              kmM: milliExpr('$$l.distanceKm'),
              revenueC: centsExpr('$$l.pricing.billedFreight'),
              tollC: centsExpr('$$l.pricing.toll'),
              loadedM: legLitresMilli('l', 'loaded'),
              offloadedM: legLitresMilli('l', 'offloaded'),
            },
          },
        },
      },
    },
  ];
  const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
  const num = (v: unknown): number => (typeof v === 'number' ? v : 0);
  const cursor = trips(db).aggregate<Record<string, unknown> & { legs?: Record<string, unknown>[] }>(pipeline, { maxTimeMS, batchSize: AUDIT_BATCH_SIZE });
  for await (const r of cursor) {
    yield {
      client: str(r.client),
      vehicle: str(r.vehicle),
      plate: str(r.plate),
      config: str(r.config),
      driver: str(r.driver),
      driverName: str(r.driverName),
      originId: str(r.originId),
      originName: str(r.originName),
      originCity: str(r.originCity),
      originState: str(r.originState),
      destinationId: str(r.destinationId),
      destinationName: str(r.destinationName),
      destinationCity: str(r.destinationCity),
      destinationState: str(r.destinationState),
      legs: (r.legs ?? []).map((l) => ({
        at: typeof l.at === 'number' ? l.at : null,
        kmM: num(l.kmM),
        revenueC: num(l.revenueC),
        tollC: num(l.tollC),
        loadedM: num(l.loadedM),
        offloadedM: num(l.offloadedM),
      })),
    };
  }
}
