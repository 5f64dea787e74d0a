import type { HandlerDeps, HandlerMap, ValidatedQuery } from './types.ts';
import { apiVersion } from './api-version.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { listShipments } from '../lib/trips/list-shipments.ts';
import { getShipment } from '../lib/trips/get-shipment.ts';

export function shipmentsHandlers(deps: HandlerDeps): Pick<HandlerMap, 'listShipments' | 'getShipment'> {
  return {
    async listShipments(request, reply) {
      const query = request.query as ValidatedQuery<'listShipments', 'page' | 'limit' | 'detail' | 'dateFilterBy'>;
      const legacy = apiVersion(request, reply) === '1';
      const page = await listShipments(deps, tenantOf(request), { ...query, detail: legacy ? 'full' : query.detail });
      return legacy ? page.data : page;
    },
    async getShipment(request) {
      const query = request.query as ValidatedQuery<'getShipment', 'detail'>;
      return getShipment(deps, tenantOf(request), { id: request.params.id, detail: query.detail });
    },
  };
}
