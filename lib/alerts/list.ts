/** GET /api/alerts/jobs, DELETE /api/alerts/jobs/{id}, GET /api/alerts: tenant-scoped reads and cancel. */
import type { ServiceContext } from '../context.ts';
import { deleteAlertJob, findAlertJobs, findAlertRecords } from '../db/alert-jobs-repo.ts';
import { notFound } from '../http/api-error.ts';
import { pageMeta, pageWindow, type PageMeta } from '../shared/pagination.ts';
import { alertJobView, type AlertJobView, type JobState } from './jobs.ts';
import { alertRecordView, type AlertRecordView } from './records.ts';

export interface AlertsPage<T> {
  meta: PageMeta & { tenant: string };
  data: T[];
}

export interface ListAlertJobsInput {
  page: number;
  limit: number;
  ruleId?: string;
  cycleKey?: string;
  userId?: string;
  state?: JobState;
}

export async function listAlertJobs(ctx: ServiceContext, tenant: string, input: ListAlertJobsInput): Promise<AlertsPage<AlertJobView>> {
  const window = pageWindow(input);
  const { total, docs } = await findAlertJobs(
    ctx.db,
    tenant,
    { ruleId: input.ruleId, cycleKey: input.cycleKey, userId: input.userId, state: input.state },
    window,
    ctx.config.queryTimeoutMs,
  );
  return { meta: { ...pageMeta(total, input), tenant }, data: docs.map(alertJobView) };
}

/** Another tenant's id is "not found", never "forbidden": ids must not leak. */
export async function cancelAlertJob(ctx: ServiceContext, tenant: string, id: string): Promise<{ cancelled: true; job: AlertJobView }> {
  const deleted = await deleteAlertJob(ctx.db, tenant, id);
  if (!deleted) throw notFound(`no alert job with id ${id}`);
  return { cancelled: true, job: alertJobView(deleted) };
}

export interface ListAlertsInput {
  page: number;
  limit: number;
  userId?: string;
  ruleId?: string;
  cycleKey?: string;
  status?: 'triggered' | 'clear';
}

export async function listAlerts(ctx: ServiceContext, tenant: string, input: ListAlertsInput): Promise<AlertsPage<AlertRecordView>> {
  const window = pageWindow(input);
  const { total, docs } = await findAlertRecords(
    ctx.db,
    tenant,
    { userId: input.userId, ruleId: input.ruleId, cycleKey: input.cycleKey, status: input.status },
    window,
    ctx.config.queryTimeoutMs,
  );
  return { meta: { ...pageMeta(total, input), tenant }, data: docs.map(alertRecordView) };
}
