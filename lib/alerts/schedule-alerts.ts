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
 */
import { storeExtraData } from './extra-data.ts';
import { ObjectId } from 'mongodb';
import type { ServiceContext } from '../context.ts';
import { ensureAlertIndexes, findAlertJobIdsByKeys, insertAlertJobs } from '../db/alert-jobs-repo.ts';
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

export async function scheduleAlerts(ctx: ServiceContext, tenant: string, input: ScheduleAlertsInput): Promise<ScheduleAlertsResult> {
  const now = ctx.now();
  const valid = validateScheduleInput(tenant, input, now);
  await ensureAlertIndexes(ctx.db);

  const keyOf = new Map<string, string>(valid.userIds.map((u) => [u, alertJobKey(tenant, valid.ruleId, valid.cycleKey, u)]));
  const outcome = new Map<string, ScheduledJobRef>();
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
      outcome.set(doc.data.userId, { userId: doc.data.userId, jobId: doc._id.toHexString(), created: true });
    }
    const dupUsers = duplicates.map((i) => docs[i]!.data.userId);
    const existing = await findAlertJobIdsByKeys(ctx.db, tenant, dupUsers.map((u) => keyOf.get(u)!));
    pending = [];
    for (const userId of dupUsers) {
      const id = existing.get(keyOf.get(userId)!);
      if (id) outcome.set(userId, { userId, jobId: id.toHexString(), created: false });
      else pending.push(userId);
    }
  }

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
