import type { HandlerDeps, HandlerMap, ValidatedQuery } from './types.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { getTaxSummary } from '../lib/tax/get-tax-summary.ts';

export function taxHandlers(deps: HandlerDeps): Pick<HandlerMap, 'getTaxSummary'> {
  return {
    async getTaxSummary(request) {
      const query = request.query as ValidatedQuery<'getTaxSummary', 'limit' | 'basis'>;
      return getTaxSummary(deps, tenantOf(request), query);
    },
  };
}
