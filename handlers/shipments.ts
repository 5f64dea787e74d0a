import type { HandlerDeps, HandlerMap } from './types.ts';
import { apiVersion } from './api-version.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { listShipments } from '../lib/trips/list-shipments.ts';
import { getShipment } from '../lib/trips/get-shipment.ts';
import { recordLegDelivery } from '../lib/trips/record-leg-delivery.ts';

export function shipmentsHandlers(deps: HandlerDeps): Pick<HandlerMap, 'listShipments' | 'getShipment' | 'recordLegDelivery'> {
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
  };
}
