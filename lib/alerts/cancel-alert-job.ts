/** DELETE /api/alerts/jobs/{id}: removes one of the tenant's alert jobs. */
import type { ServiceContext } from '../context.ts';
import { deleteAlertJob } from './alert-jobs-repo.ts';
import { notFound } from '../http/api-error.ts';
import { alertJobView, type AlertJobView } from './jobs.ts';

/** Another tenant's id is "not found", never "forbidden": ids must not leak. */
export async function cancelAlertJob(ctx: ServiceContext, tenant: string, id: string): Promise<{ cancelled: true; job: AlertJobView }> {
  const deleted = await deleteAlertJob(ctx.db, tenant, id);
  if (!deleted) throw notFound(`no alert job with id ${id}`);
  return { cancelled: true, job: alertJobView(deleted) };
}
