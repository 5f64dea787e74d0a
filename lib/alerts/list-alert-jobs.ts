/** GET /api/alerts/jobs: the tenant's alert jobs, filtered and paged. */
import type { ServiceContext } from '../context.ts';
import { ALERT_JOB_SORT, findAlertJobs } from './alert-jobs-repo.ts';
import { alertsPage, type AlertsPage } from './alerts-page.ts';
import { alertJobView, type AlertJobView, type JobState } from './jobs.ts';

export interface ListAlertJobsInput {
  page: number;
  limit: number;
  cursor?: string;
  ruleId?: string;
  cycleKey?: string;
  userId?: string;
  state?: JobState;
}

export async function listAlertJobs(ctx: ServiceContext, tenant: string, input: ListAlertJobsInput): Promise<AlertsPage<AlertJobView>> {
  const filters = { ruleId: input.ruleId, cycleKey: input.cycleKey, userId: input.userId, state: input.state };
  return alertsPage(
    ctx.db,
    tenant,
    'alert-jobs',
    { ...input, filters },
    ALERT_JOB_SORT,
    (q) => findAlertJobs(ctx.db, tenant, filters, q, ctx.config.queryTimeoutMs),
    alertJobView,
  );
}
