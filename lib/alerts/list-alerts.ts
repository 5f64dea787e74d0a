/** GET /api/alerts: the alert records the tenant's jobs produced, filtered and paged. */
import type { ServiceContext } from '../context.ts';
import { ALERT_RECORD_SORT, findAlertRecords } from './alert-jobs-repo.ts';
import { alertsPage, type AlertsPage } from './alerts-page.ts';
import { alertRecordView, type AlertRecordView } from './records.ts';

export interface ListAlertsInput {
  page: number;
  limit: number;
  cursor?: string;
  userId?: string;
  ruleId?: string;
  cycleKey?: string;
  status?: 'triggered' | 'clear';
  /** Findings listed per record (the most important first); the record's summary counts them all. */
  findingsLimit?: number;
}

export async function listAlerts(ctx: ServiceContext, tenant: string, input: ListAlertsInput): Promise<AlertsPage<AlertRecordView>> {
  const filters = { userId: input.userId, ruleId: input.ruleId, cycleKey: input.cycleKey, status: input.status };
  return alertsPage(
    ctx.db,
    tenant,
    'alerts',
    { ...input, filters },
    ALERT_RECORD_SORT,
    (q) => findAlertRecords(ctx.db, tenant, filters, q, ctx.config.queryTimeoutMs),
    (doc) => alertRecordView(doc, input.findingsLimit),
  );
}
