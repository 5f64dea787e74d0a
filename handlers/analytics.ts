import type { HandlerDeps, HandlerMap, ValidatedQuery } from './types.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { getCashInflowForecast } from '../lib/analytics/get-cash-inflow-forecast.ts';
import { auditDiscountsAndShrinkage } from '../lib/analytics/audit-discounts-and-shrinkage.ts';
import { auditFleetUtilization } from '../lib/analytics/audit-fleet-utilization.ts';
import { auditDispatchToBill } from '../lib/analytics/audit-dispatch-to-bill.ts';
import { getFreightUnitEconomics } from '../lib/analytics/get-freight-unit-economics.ts';

type AnalyticsOps = 'getCashInflowForecast' | 'auditDiscountsAndShrinkage' | 'auditFleetUtilization' | 'auditDispatchToBill' | 'getFreightUnitEconomics';

/** The five analytic audits: validated query in, domain service out. */
export function analyticsHandlers(deps: HandlerDeps): Pick<HandlerMap, AnalyticsOps> {
  return {
    async getCashInflowForecast(request) {
      const query = request.query as ValidatedQuery<'getCashInflowForecast', 'bucket' | 'limit'>;
      return getCashInflowForecast(deps, tenantOf(request), query);
    },
    async auditDiscountsAndShrinkage(request) {
      const query = request.query as ValidatedQuery<'auditDiscountsAndShrinkage', 'limit'>;
      return auditDiscountsAndShrinkage(deps, tenantOf(request), query);
    },
    async auditFleetUtilization(request) {
      const query = request.query as ValidatedQuery<'auditFleetUtilization', 'groupBy' | 'litresBasis'>;
      return auditFleetUtilization(deps, tenantOf(request), query);
    },
    async auditDispatchToBill(request) {
      const query = request.query as ValidatedQuery<'auditDispatchToBill', 'limit'>;
      return auditDispatchToBill(deps, tenantOf(request), query);
    },
    async getFreightUnitEconomics(request) {
      const query = request.query as ValidatedQuery<'getFreightUnitEconomics', 'litresBasis' | 'limit'>;
      return getFreightUnitEconomics(deps, tenantOf(request), query);
    },
  };
}
