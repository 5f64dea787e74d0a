/**
 * PUT /api/shipments/{id}/legs/{shipmentId}/delivery: records one leg's
 * delivery (lib/trips/leg-delivery.ts, written by record-deliveries.ts) and
 * answers the trip's summary. Idempotent: the same delivery again writes
 * nothing and answers the same summary.
 */
import type { ServiceContext } from '../context.ts';
import { ApiError, badRequest, notFound, type ErrorField } from '../http/api-error.ts';
import { recordDeliveries } from './record-deliveries.ts';
import type { DeliveryInput } from './leg-delivery.ts';
import { summarizeTrips } from './summarize-trips.ts';
import type { TripSummary } from './summary.ts';
import { parseDateTime } from '../time/date-time.ts';

export interface LegDeliveryBody {
  /** RFC 3339 date-time with offset (the spec's format: date-time). */
  offloadDate: string;
  ticket?: string | null;
  products: { code: string; offloaded: number }[];
}

export interface RecordLegDeliveryInput {
  id: string;
  shipmentId: string;
  body: LegDeliveryBody;
}

export const deliveryInputOf = (body: LegDeliveryBody): DeliveryInput => ({
  offloadDate: parseDateTime(body.offloadDate),
  products: body.products,
  // Trimmed as the CSV and the JSON rows are (deliveries-csv.ts): "TK-1 " by one and "TK-1" by the other are one ticket.
  ticket: body.ticket?.trim() ?? null,
});

export async function recordLegDelivery(ctx: ServiceContext, tenant: string, input: RecordLegDeliveryInput): Promise<TripSummary> {
  const result = (await recordDeliveries(ctx, tenant, [{ tripId: input.id, shipmentId: input.shipmentId, input: deliveryInputOf(input.body) }]))[0]!;
  switch (result.status) {
    case 'no-trip':
      throw notFound('no such shipment for this tenant');
    case 'no-leg':
      throw notFound(`shipment ${input.id} has no leg ${input.shipmentId}`);
    case 'invalid': {
      const details = result.problems.map((p) => `${p.field}: ${p.message}`);
      const fields: ErrorField[] = result.problems.map((p, i) => ({ in: 'body', name: p.field, detail: details[i]! }));
      throw badRequest('Invalid delivery', details, { reason: 'invalid_body', fields });
    }
    case 'busy':
      throw new ApiError(503, 'Service Unavailable', ['the trip changed during every attempt to record the delivery; send it again'], { reason: 'conflict' });
    default: {
      const [summary] = await summarizeTrips(ctx, tenant, [result.trip]);
      return summary!;
    }
  }
}
