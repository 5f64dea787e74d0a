import type { HandlerDeps, HandlerMap } from './types.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { getCashInflowForecast } from '../lib/analytics/get-cash-inflow-forecast.ts';
import { auditDiscountsAndShrinkage } from '../lib/analytics/audit-discounts-and-shrinkage.ts';
import { auditFleetUtilization } from '../lib/analytics/audit-fleet-utilization.ts';
import { auditDispatchToBill } from '../lib/analytics/audit-dispatch-to-bill.ts';
import { getFreightUnitEconomics } from '../lib/analytics/get-freight-unit-economics.ts';
import { getReceivablesAging } from '../lib/analytics/get-receivables-aging.ts';

type AnalyticsOps =
  'getCashInflowForecast' | 'getReceivablesAging' | 'auditDiscountsAndShrinkage' | 'auditFleetUtilization' | 'auditDispatchToBill' | 'getFreightUnitEconomics';

/** The analytic audits and the receivables aging: validated query in, domain service out. */
export function analyticsHandlers(deps: HandlerDeps): Pick<HandlerMap, AnalyticsOps> {
  return {
    async getCashInflowForecast(request) {
      return getCashInflowForecast(deps, tenantOf(request), request.query);
    },
    async getReceivablesAging(request) {
      return getReceivablesAging(deps, tenantOf(request), request.query);
    },
    async auditDiscountsAndShrinkage(request) {
      return auditDiscountsAndShrinkage(deps, tenantOf(request), request.query);
    },
    async auditFleetUtilization(request) {
      return auditFleetUtilization(deps, tenantOf(request), request.query);
    },
    async auditDispatchToBill(request) {
      return auditDispatchToBill(deps, tenantOf(request), request.query);
    },
    async getFreightUnitEconomics(request) {
      return getFreightUnitEconomics(deps, tenantOf(request), request.query);
    },
  };
}
