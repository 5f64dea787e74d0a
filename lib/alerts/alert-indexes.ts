/** The indexes of `alertJobs` and `alerts` (lib/alerts/alert-jobs-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs } from '../db/indexes.ts';
import { AGENDA_LOCK_INDEX } from '../jobs/agenda-lock-index.ts';

export const ALERT_INDEXES: IndexSpecs = {
  [COLLECTIONS.alertJobs]: [
    // One job per (tenant, ruleId, cycleKey, userId): concurrent identical schedules cannot duplicate.
    // Partial on real MongoDB (only alert jobs carry a key); the embedded engine ignores the filter.
    { key: { 'data.jobKey': 1 }, name: 'alert_job_key_unique', unique: true, partialFilterExpression: { 'data.jobKey': { $type: 'string' } } },
    // Which of a request's users are scheduled already (the quota counts only new jobs), tenant first.
    { key: { 'data.tenant': 1, 'data.jobKey': 1 }, name: 'tenant_job_key' },
    // Listing a tenant's alert jobs (`name` tells them from other Agenda jobs), newest first, by user or rule+cycle.
    { key: { 'data.tenant': 1, name: 1, 'data.createdAt': -1, _id: -1 }, name: 'tenant_name_created' },
    { key: { 'data.tenant': 1, name: 1, 'data.userId': 1, 'data.createdAt': -1, _id: -1 }, name: 'tenant_name_user_created' },
    { key: { 'data.tenant': 1, name: 1, 'data.ruleId': 1, 'data.cycleKey': 1, 'data.createdAt': -1, _id: -1 }, name: 'tenant_name_rule_cycle_created' },
    AGENDA_LOCK_INDEX,
  ],
  [COLLECTIONS.alerts]: [
    { key: { tenant: 1, evaluatedAt: -1, _id: -1 }, name: 'tenant_evaluated' },
    { key: { tenant: 1, userId: 1, evaluatedAt: -1, _id: -1 }, name: 'tenant_user_evaluated_id' },
    { key: { tenant: 1, ruleId: 1, cycleKey: 1, evaluatedAt: -1, _id: -1 }, name: 'tenant_rule_cycle_evaluated_id' },
    { key: { tenant: 1, status: 1, evaluatedAt: -1, _id: -1 }, name: 'tenant_status_evaluated' },
  ],
};
