import type { HandlerDeps, HandlerMap } from './types.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { getTaxSummary } from '../lib/tax/get-tax-summary.ts';
import { getTaxPosition } from '../lib/tax/get-tax-position.ts';
import { listTaxPositionLines } from '../lib/tax/list-tax-position-lines.ts';
import { diotFile, getDiot } from '../lib/tax/get-diot.ts';

export function taxHandlers(deps: HandlerDeps): Pick<HandlerMap, 'getTaxSummary' | 'getTaxPosition' | 'listTaxPositionLines' | 'getDiot'> {
  return {
    async getTaxSummary(request) {
      return getTaxSummary(deps, tenantOf(request), request.query);
    },
    async getTaxPosition(request) {
      return getTaxPosition(deps, tenantOf(request), request.query);
    },
    async listTaxPositionLines(request) {
      return listTaxPositionLines(deps, tenantOf(request), request.query);
    },
    async getDiot(request, reply) {
      const diot = await getDiot(deps, tenantOf(request), request.query);
      if (request.query.format === 'csv') return reply.type('text/csv; charset=utf-8').send(diotFile(diot));
      return diot;
    },
  };
}
