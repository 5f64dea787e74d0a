import type { HandlerDeps, HandlerMap } from './types.ts';
import { apiVersion } from './api-version.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { listShipments } from '../lib/trips/list-shipments.ts';
import { getShipment } from '../lib/trips/get-shipment.ts';
import { recordLegDelivery } from '../lib/trips/record-leg-delivery.ts';
import { importDeliveries } from '../lib/trips/import-deliveries.ts';
import { DeliveriesAborted } from '../lib/trips/record-deliveries.ts';

export function shipmentsHandlers(deps: HandlerDeps): Pick<HandlerMap, 'listShipments' | 'getShipment' | 'recordLegDelivery' | 'importDeliveries'> {
  return {
    async listShipments(request, reply) {
      const legacy = apiVersion(request, reply) === '1';
      const page = await listShipments(deps, tenantOf(request), { ...request.query, detail: legacy ? 'full' : request.query.detail });
      // Version 2 states the detail level at the top too: it is the discriminator of the page schemas.
      return legacy ? page.data : { detail: page.meta.detail, ...page };
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
      // Its deadline is the imports' (IMPORT_TIMEOUT_MS): it answers 503, or the client leaves; stop between rounds of trips.
      const stop = new AbortController();
      reply.raw.once('close', () => stop.abort());
      try {
        return await importDeliveries(deps, tenantOf(request), Buffer.isBuffer(body) ? { csv: body } : { rows: request.body.rows }, stop.signal);
      } catch (err) {
        if (!(err instanceof DeliveriesAborted)) throw err;
        if (!reply.sent) reply.raw.destroy();
        return reply;
      }
    },
  };
}
