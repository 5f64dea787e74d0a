import type { HandlerDeps, HandlerMap } from './types.ts';
import { apiVersion, v1Page, withDetail } from './api-version.ts';
import { runUntilStopped } from './long-running.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { listShipments, listShipmentsV1 } from '../lib/trips/list-shipments.ts';
import { getShipment } from '../lib/trips/get-shipment.ts';
import { recordLegDelivery } from '../lib/trips/record-leg-delivery.ts';
import { importDeliveries } from '../lib/trips/import-deliveries.ts';
import { importDeliveriesCsv } from '../lib/trips/import-deliveries-csv.ts';
import { DeliveriesAborted } from '../lib/trips/record-deliveries.ts';

export function shipmentsHandlers(
  deps: HandlerDeps,
): Pick<HandlerMap, 'listShipments' | 'getShipment' | 'recordLegDelivery' | 'importDeliveries' | 'importDeliveriesCsv'> {
  return {
    async listShipments(request, reply) {
      // Version 1 is the earlier bare array of stored records; version 2 states the detail level at the top too.
      if (apiVersion(request, reply, deps.now) === '1') return v1Page(reply, await listShipmentsV1(deps, tenantOf(request), request.query));
      return withDetail(await listShipments(deps, tenantOf(request), request.query));
    },
    async getShipment(request) {
      return getShipment(deps, tenantOf(request), { id: request.params.id, detail: request.query.detail });
    },
    async recordLegDelivery(request) {
      return recordLegDelivery(deps, tenantOf(request), { id: request.params.id, shipmentId: request.params.shipmentId, body: request.body });
    },
    async importDeliveries(request, reply) {
      // text/csv arrives as bytes (lib/http/binary-bodies.ts), JSON as its validated rows.
      const body: unknown = request.body;
      const input = Buffer.isBuffer(body) ? { csv: body } : { rows: request.body.rows };
      return runUntilStopped(
        reply,
        deps.shutdown,
        (err) => err instanceof DeliveriesAborted,
        'the same tickets',
        (signal) => importDeliveries(deps, tenantOf(request), input, signal),
      );
    },
    async importDeliveriesCsv(request, reply) {
      // text/csv arrives as bytes (lib/http/binary-bodies.ts).
      const body: unknown = request.body;
      if (!Buffer.isBuffer(body)) throw new Error('a CSV body arrives as bytes');
      return runUntilStopped(
        reply,
        deps.shutdown,
        (err) => err instanceof DeliveriesAborted,
        'the same tickets',
        (signal) => importDeliveriesCsv(deps, tenantOf(request), body, signal),
      );
    },
  };
}
