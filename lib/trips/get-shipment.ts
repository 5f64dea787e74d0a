import type { ServiceContext } from '../context.ts';
import { findTripById } from './trips-repo.ts';
import { notFound } from '../http/api-error.ts';
import type { TripSummary } from './summary.ts';
import { summarizeTrips } from './summarize-trips.ts';
import { tripView, type TripDocumentView } from './trip-view.ts';

export interface GetShipmentInput {
  id: string;
  detail: 'summary' | 'full';
}

/** One trip of the tenant; another tenant's id is "not found" too, so ids never leak. */
export async function getShipment(ctx: ServiceContext, tenant: string, input: GetShipmentInput): Promise<TripSummary | TripDocumentView> {
  const trip = await findTripById(ctx.db, tenant, input.id, ctx.config.queryTimeoutMs);
  if (!trip) throw notFound('no such shipment for this tenant');
  if (input.detail === 'full') return tripView(trip);
  const [summary] = await summarizeTrips(ctx, tenant, [trip]);
  return summary!;
}
