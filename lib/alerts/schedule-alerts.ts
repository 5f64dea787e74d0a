/**
 * POST /api/alerts/schedule: one job per user, for the authenticated tenant.
 *
 * Uniqueness is the database's job, never a read-then-write: every job carries
 * `data.jobKey` = hash(tenant, ruleId, cycleKey, userId) under a UNIQUE index,
 * and all jobs are written with one unordered insertMany. A user whose key
 * already exists (an earlier or a concurrent identical request) fails with
 * E11000 on that document only and is reported as `alreadyScheduled` with the
 * existing job's id. The answer is sent only after the insert is acknowledged
 * (w: majority), so a 200 means the jobs survive a crash of this process.
 * The quota's count and the insert run under the tenant's lease (lib/db/lease.ts),
 * so concurrent requests cannot pass the quota together.
 */
import { storeExtraData } from './extra-data.ts';
import { ObjectId } from 'mongodb';
import type { ServiceContext } from '../context.ts';
import { countActiveAlertJobs, ensureAlertIndexes, findAlertJobIdsByKeys, insertAlertJobs } from './alert-jobs-repo.ts';
import { quotaExceeded } from '../http/api-error.ts';
import { quotaLease, withLease } from '../db/lease.ts';
import { alertJobKey, newAlertJobDocument, type AlertJobDocument } from './jobs.ts';
import type { AlertRuleId } from './rules.ts';
import { validateScheduleInput, type ScheduleAlertsInput } from './validation.ts';

export interface ScheduledJobRef {
  userId: string;
  jobId: string;
  created: boolean;
}

export interface ScheduleAlertsResult {
  success: true;
  message: string;
  tenant: string;
  ruleId: AlertRuleId;
  cycleKey: string;
  dueDate: string;
  individual: boolean;
  scheduled: number;
  newlyScheduled: number;
  alreadyScheduled: number;
  jobs: ScheduledJobRef[];
}

/** A job found by key can vanish (cancelled) between the failed insert and the lookup: try again. */
const MAX_ROUNDS = 3;

export { validateScheduleInput, type ScheduleAlertsInput } from './validation.ts';

export interface ScheduleAlertsOptions {
  /** Alert jobs the tenant may have scheduled and not yet run (ALERT_MAX_ACTIVE_JOBS). */
  maxActiveJobs: number;
}

/**
 * The per-tenant quota: the jobs this request would add (users not scheduled yet for this rule
 * and cycle) plus the tenant's active ones may not exceed `maxActiveJobs`; 409 `quota_exceeded`
 * otherwise, with nothing written. Called under the tenant's lease, with the insert.
 */
async function checkJobQuota(ctx: ServiceContext, tenant: string, keys: string[], maxActiveJobs: number): Promise<void> {
  const [active, existing] = await Promise.all([countActiveAlertJobs(ctx.db, tenant, ctx.config.queryTimeoutMs), findAlertJobIdsByKeys(ctx.db, tenant, keys)]);
  const adding = keys.length - existing.size;
  if (adding > 0 && active + adding > maxActiveJobs) {
    throw quotaExceeded(
      409,
      `the tenant has ${active} active alert jobs and may have at most ${maxActiveJobs} (ALERT_MAX_ACTIVE_JOBS); this request would add ${adding}: cancel jobs (DELETE /api/alerts/jobs/{id}) or wait for them to run`,
    );
  }
}

export async function scheduleAlerts(
  ctx: ServiceContext,
  tenant: string,
  input: ScheduleAlertsInput,
  opts: ScheduleAlertsOptions,
): Promise<ScheduleAlertsResult> {
  const now = ctx.now();
  const valid = validateScheduleInput(tenant, input, now);
  await ensureAlertIndexes(ctx.db);

  const keyOf = new Map<string, string>(valid.userIds.map((u) => [u, alertJobKey(tenant, valid.ruleId, valid.cycleKey, u)]));
  const outcome = await withLease(ctx.db, `alertJobs:${tenant}`, quotaLease(ctx.config.queryTimeoutMs, 'alert schedules'), async () => {
    await checkJobQuota(ctx, tenant, [...keyOf.values()], opts.maxActiveJobs);
    const settled = new Map<string, ScheduledJobRef>();
    let pending = valid.userIds;
    for (let round = 1; pending.length > 0; round++) {
      if (round > MAX_ROUNDS) throw new Error(`could not settle alert jobs for ${pending.length} users after ${MAX_ROUNDS} rounds`);
      const docs: AlertJobDocument[] = pending.map((userId) =>
        newAlertJobDocument(new ObjectId(), {
          jobKey: keyOf.get(userId)!,
          tenant,
          userId,
          ruleId: valid.ruleId,
          cycleKey: valid.cycleKey,
          nameAlert: valid.nameAlert,
          individual: valid.individual,
          extraData: storeExtraData(valid.extraData),
          dueDate: valid.dueDate,
          createdAt: now,
          failures: [],
        }),
      );
      const { inserted, duplicates } = await insertAlertJobs(ctx.db, docs);
      for (const i of inserted) {
        const doc = docs[i]!;
        settled.set(doc.data.userId, { userId: doc.data.userId, jobId: doc._id.toHexString(), created: true });
      }
      const dupUsers = duplicates.map((i) => docs[i]!.data.userId);
      const existing = await findAlertJobIdsByKeys(
        ctx.db,
        tenant,
        dupUsers.map((u) => keyOf.get(u)!),
      );
      pending = [];
      for (const userId of dupUsers) {
        const id = existing.get(keyOf.get(userId)!);
        if (id) settled.set(userId, { userId, jobId: id.toHexString(), created: false });
        else pending.push(userId);
      }
    }
    return settled;
  });

  const jobs = valid.userIds.map((u) => outcome.get(u)!);
  const newlyScheduled = jobs.filter((j) => j.created).length;
  const alreadyScheduled = jobs.length - newlyScheduled;
  const n = jobs.length;
  return {
    success: true,
    message:
      `${n} individual alert${n === 1 ? '' : 's'} scheduled for rule ${valid.ruleId}, cycle ${valid.cycleKey} ` +
      `(${newlyScheduled} new, ${alreadyScheduled} already scheduled)`,
    tenant,
    ruleId: valid.ruleId,
    cycleKey: valid.cycleKey,
    dueDate: valid.dueDate.toISOString(),
    individual: valid.individual,
    scheduled: n,
    newlyScheduled,
    alreadyScheduled,
    jobs,
  };
}
