import type { ServiceContext } from '../context.ts';
import { findTrips, TRIP_SORTS, type TripFilter } from './trips-repo.ts';
import { serviceSecret } from '../db/service-secrets-repo.ts';
import { SYNC_CLOCK_MARGIN_MS, syncFrom } from '../db/writes-in-flight.ts';
import { filtersFingerprint } from '../shared/cursor.ts';
import { isoInstant, listPage } from '../shared/list-page.ts';
import type { TripDocument } from '../model/trip-document.ts';
import { dayRange, type InstantRange } from '../shared/date-range.ts';
import type { PageMeta } from '../shared/pagination.ts';
import type { TripSummary } from './summary.ts';
import { summarizeTrips } from './summarize-trips.ts';
import { tripView, type TripDocumentView } from './trip-view.ts';
import { mxYmdInt } from '../time/mexico-city.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';

export interface ListShipmentsInput {
  page: number;
  limit: number;
  detail: 'summary' | 'full';
  client?: string;
  shipmentId?: string;
  status?: number;
  startDate?: string;
  endDate?: string;
  dateFilterBy: 'date' | 'load' | 'offload';
  loadStartDate?: string;
  loadEndDate?: string;
  offloadStartDate?: string;
  offloadEndDate?: string;
  /** ISO date-time: only trips changed at or after it, oldest change first. */
  updatedSince?: string;
  /** Continues a walk where the page that returned it as `meta.nextCursor` ended. */
  cursor?: string;
}

/** `syncFrom` (with `updatedSince`): where the next incremental sync resumes, lib/db/writes-in-flight.ts. */
type Meta = PageMeta & { nextCursor: string | null; tenant: string; syncFrom?: string };
export type ShipmentsPage = { meta: Meta & { detail: 'summary' }; data: TripSummary[] } | { meta: Meta & { detail: 'full' }; data: TripDocumentView[] };

const both = (a: InstantRange | undefined, b: InstantRange): InstantRange | undefined => {
  const from = Math.max(a?.from ?? -Infinity, b.from ?? -Infinity);
  const to = Math.min(a?.to ?? Infinity, b.to ?? Infinity);
  const out: InstantRange = {};
  if (Number.isFinite(from)) out.from = from;
  if (Number.isFinite(to)) out.to = to;
  return out.from === undefined && out.to === undefined ? undefined : out;
};

/** Builds the leg filter: the general range applies to the date `dateFilterBy` names, the specific ranges to theirs. */
export function shipmentFilter(input: Omit<ListShipmentsInput, 'detail'>): TripFilter {
  const general = dayRange(input.startDate, input.endDate);
  const load = dayRange(input.loadStartDate, input.loadEndDate);
  const offload = dayRange(input.offloadStartDate, input.offloadEndDate);
  const filter: TripFilter = { client: input.client, shipmentId: input.shipmentId, legStatus: input.status };
  if (input.updatedSince !== undefined) filter.updatedSince = isoInstant(input.updatedSince, 'updatedSince');
  const hasGeneral = general.from !== undefined || general.to !== undefined;
  if (hasGeneral && input.dateFilterBy === 'date') {
    filter.legDate = {
      ...(general.from !== undefined ? { from: mxYmdInt(general.from) } : {}),
      ...(general.to !== undefined ? { to: mxYmdInt(general.to) } : {}),
    };
  }
  filter.loaded = both(hasGeneral && input.dateFilterBy === 'load' ? general : undefined, load);
  filter.offloaded = both(hasGeneral && input.dateFilterBy === 'offload' ? general : undefined, offload);
  return filter;
}

export async function listShipments(ctx: ServiceContext, tenant: string, input: ListShipmentsInput): Promise<ShipmentsPage> {
  const { detail, ...walk } = input;
  const { meta, docs } = await storedPage(ctx, tenant, walk);
  if (detail === 'full') return { meta: { ...meta, detail: 'full' }, data: docs.map(tripView) };
  return { meta: { ...meta, detail: 'summary' }, data: await summarizeTrips(ctx, tenant, docs) };
}

/** A stored trip as the version 1 schema types it (a free-form object: a mapped type, so it takes an index signature). */
type StoredTripV1 = { [K in keyof TripDocument]: TripDocument[K] };

/**
 * Version 1 (deprecated): the earlier bare array of stored trips, with `_id` as that shape had
 * it (version 2 answers name the trip `id`, lib/trips/trip-view.ts). With `updatedSince`, where
 * the next sync resumes (`syncFrom`): the handler sends it as a header.
 */
export async function listShipmentsV1(ctx: ServiceContext, tenant: string, input: ListShipmentsInput): Promise<{ docs: StoredTripV1[]; syncFrom?: string }> {
  const { detail: _full, ...walk } = input;
  const { meta, docs } = await storedPage(ctx, tenant, walk);
  return { docs, ...(meta.syncFrom === undefined ? {} : { syncFrom: meta.syncFrom }) };
}

async function storedPage(ctx: ServiceContext, tenant: string, input: Omit<ListShipmentsInput, 'detail'>): Promise<{ meta: Meta; docs: TripDocument[] }> {
  // The detail level changes the shape, not the walk: a cursor serves both.
  const { page, limit, cursor, ...filters } = input;
  const filter = shipmentFilter(input);
  const sort = filter.updatedSince === undefined ? 'default' : 'sync';
  const { meta: pageMeta, docs } = await listPage({
    secret: await serviceSecret(ctx.db, 'cursor-hmac'),
    binding: { list: 'shipments', tenant, sort, filters: filtersFingerprint(filters) },
    sort: TRIP_SORTS[sort],
    request: { page, limit, cursor },
    fetch: (q) => findTrips(ctx.db, tenant, filter, q, ctx.config.queryTimeoutMs),
    // A sync walk (`updatedSince`) says where the next one resumes.
    syncFrom: sort === 'sync' ? () => syncFrom(ctx.db, tenant, () => ctx.now().getTime(), SYNC_CLOCK_MARGIN_MS, ctx.config.queryTimeoutMs) : undefined,
  });
  return { meta: { ...pageMeta, tenant }, docs };
}

// Checked against the spec's page schemas (each detail level its own).
export type ShipmentsPageChecks = [
  Conforms<Extract<ShipmentsPage, { meta: { detail: 'summary' } }>['meta'], components['schemas']['ShipmentsSummaryPage']['meta']>,
  Conforms<Extract<ShipmentsPage, { meta: { detail: 'full' } }>['data'], components['schemas']['ShipmentsFullPage']['data']>,
];
