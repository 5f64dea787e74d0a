import type { HandlerDeps, HandlerMap } from './types.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { scheduleAlerts, validateScheduleInput } from '../lib/alerts/schedule-alerts.ts';
import { requestFingerprint, withIdempotency } from '../lib/alerts/idempotency.ts';
import { listAlertJobs } from '../lib/alerts/list-alert-jobs.ts';
import { cancelAlertJob } from '../lib/alerts/cancel-alert-job.ts';
import { listAlerts } from '../lib/alerts/list-alerts.ts';

export function alertsHandlers(deps: HandlerDeps): Pick<HandlerMap, 'scheduleAlerts' | 'listAlertJobs' | 'cancelAlertJob' | 'listAlerts'> {
  return {
    async scheduleAlerts(request, reply) {
      const tenant = tenantOf(request);
      const body = request.body;
      const key = request.headers['idempotency-key'];
      const quota = { maxActiveJobs: deps.alerts.maxActiveJobs };
      if (typeof key !== 'string') return scheduleAlerts(deps, tenant, body, quota);
      // 400/403 before the key is claimed: a rejected request writes nothing and leaves the key free.
      validateScheduleInput(tenant, body, deps.now());
      const { body: answer, replayed } = await withIdempotency(
        deps.db,
        { tenant, key, operation: 'scheduleAlerts', fingerprint: requestFingerprint(body), now: deps.now },
        () => scheduleAlerts(deps, tenant, body, quota),
      );
      if (replayed) reply.header('idempotent-replayed', 'true');
      return answer;
    },
    async listAlertJobs(request) {
      return listAlertJobs(deps, tenantOf(request), request.query);
    },
    async cancelAlertJob(request) {
      return cancelAlertJob(deps, tenantOf(request), request.params.id);
    },
    async listAlerts(request) {
      return listAlerts(deps, tenantOf(request), request.query);
    },
  };
}
