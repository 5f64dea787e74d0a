/** GET /api/alerts: the alert records the tenant's jobs produced, filtered and paged. */
import type { ServiceContext } from '../context.ts';
import { findAlertRecords } from './alert-jobs-repo.ts';
import { alertsPage, type AlertsPage } from './alerts-page.ts';
import { alertRecordView, type AlertRecordView } from './records.ts';

export interface ListAlertsInput {
  page: number;
  limit: number;
  userId?: string;
  ruleId?: string;
  cycleKey?: string;
  status?: 'triggered' | 'clear';
}

export async function listAlerts(ctx: ServiceContext, tenant: string, input: ListAlertsInput): Promise<AlertsPage<AlertRecordView>> {
  const filter = { userId: input.userId, ruleId: input.ruleId, cycleKey: input.cycleKey, status: input.status };
  return alertsPage(tenant, input, (window) => findAlertRecords(ctx.db, tenant, filter, window, ctx.config.queryTimeoutMs), alertRecordView);
}
