import type { HandlerDeps, HandlerMap } from './types.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { getTaxSummary } from '../lib/tax/get-tax-summary.ts';

export function taxHandlers(deps: HandlerDeps): Pick<HandlerMap, 'getTaxSummary'> {
  return {
    async getTaxSummary(request) {
      return getTaxSummary(deps, tenantOf(request), request.query);
    },
  };
}
