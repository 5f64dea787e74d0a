/**
 * Alert jobs as stored in the `alertJobs` collection: Agenda job documents
 * (name, nextRunAt, lockedAt, failCount, ...) whose `data` carries the alert.
 *
 * Uniqueness: `data.jobKey` = sha256 of (tenant, ruleId, cycleKey, userId) under
 * a UNIQUE index (lib/db/indexes.ts). Jobs are inserted directly, all fields
 * Agenda's MongoBackend writes for a new one-time job included, so scheduling
 * needs no running Agenda and is one `insertMany` for up to 1,000 users.
 */
import { readExtraData, type StoredExtraData } from './extra-data.ts';
import { createHash } from 'node:crypto';
import type { Filter, ObjectId } from 'mongodb';
import type { AlertRuleId } from './rules.ts';

/** The one Agenda job definition of the alerts worker. */
export const ALERT_JOB_NAME = 'alert:evaluate';

/** Failed attempts kept on a job (oldest dropped first). */
export const MAX_RECORDED_FAILURES = 10;

export interface JobFailure {
  at: Date;
  attempt: number;
  error: string;
}

export interface AlertJobData {
  /** sha256(JSON [tenant, ruleId, cycleKey, userId]); unique index. */
  jobKey: string;
  tenant: string;
  userId: string;
  ruleId: AlertRuleId;
  cycleKey: string;
  nameAlert: string;
  individual: boolean;
  /** Serialised (see extra-data.ts). */
  extraData: StoredExtraData;
  dueDate: Date;
  createdAt: Date;
  failures: JobFailure[];
}

/** The stored document (Agenda's fields + ours). */
export interface AlertJobDocument {
  _id: ObjectId;
  name: string;
  type: 'normal';
  priority: number;
  nextRunAt: Date | null;
  data: AlertJobData;
  lockedAt: Date | null;
  lastRunAt: Date | null;
  lastFinishedAt: Date | null;
  failedAt: Date | null;
  failCount: number | null;
  failReason: string | null;
  disabled: boolean | null;
  lastModifiedBy: string | null;
  /** Other fields Agenda writes (null for a one-time job). */
  repeatTimezone?: string | null;
  repeatInterval?: string | number | null;
  repeatAt?: string | null;
  progress?: number | null;
  debounceStartedAt?: Date | null;
  fork?: boolean | null;
  startDate?: Date | null;
  endDate?: Date | null;
  skipDays?: number[] | null;
}

export function alertJobKey(tenant: string, ruleId: string, cycleKey: string, userId: string): string {
  return createHash('sha256').update(JSON.stringify([tenant, ruleId, cycleKey, userId]), 'utf8').digest('hex');
}

/** A new one-time job, shaped exactly as Agenda's MongoBackend.saveJob inserts one. */
export function newAlertJobDocument(_id: ObjectId, data: AlertJobData): AlertJobDocument {
  return {
    _id,
    name: ALERT_JOB_NAME,
    type: 'normal',
    priority: 0,
    nextRunAt: data.dueDate,
    data,
    lockedAt: null,
    lastFinishedAt: null,
    failedAt: null,
    failCount: null,
    failReason: null,
    repeatTimezone: null,
    lastRunAt: null,
    repeatInterval: null,
    repeatAt: null,
    disabled: null,
    progress: null,
    debounceStartedAt: null,
    fork: null,
    startDate: null,
    endDate: null,
    skipDays: null,
    lastModifiedBy: null,
  };
}

export const JOB_STATES = ['scheduled', 'running', 'retrying', 'completed', 'failed'] as const;
export type JobState = (typeof JOB_STATES)[number];

const hasFailed = (doc: Pick<AlertJobDocument, 'failCount'>): boolean => (doc.failCount ?? 0) > 0;

/**
 * State of a one-time job from Agenda's fields. Agenda resets failCount to 0
 * on success, sets nextRunAt to the retry instant after a failure with retries
 * left, and to null when it finishes (success or retries exhausted).
 */
export function alertJobState(doc: Pick<AlertJobDocument, 'lockedAt' | 'nextRunAt' | 'failCount'>): JobState {
  if (doc.lockedAt) return 'running';
  if (doc.nextRunAt) return hasFailed(doc) ? 'retrying' : 'scheduled';
  return hasFailed(doc) ? 'failed' : 'completed';
}

/** The same states as query conditions (no $expr: the embedded engine needs plain filters). */
export function alertJobStateFilter(state: JobState): Filter<AlertJobDocument> {
  const unlocked = { lockedAt: null };
  const failedOnce = { failCount: { $gt: 0 } };
  const neverFailed = { $or: [{ failCount: null }, { failCount: 0 }] };
  switch (state) {
    case 'running':
      return { lockedAt: { $ne: null } };
    case 'scheduled':
      return { $and: [unlocked, { nextRunAt: { $ne: null } }, neverFailed] };
    case 'retrying':
      return { $and: [unlocked, { nextRunAt: { $ne: null } }, failedOnce] };
    case 'completed':
      return { $and: [unlocked, { nextRunAt: null }, neverFailed] };
    case 'failed':
      return { $and: [unlocked, { nextRunAt: null }, failedOnce] };
  }
}

/** API shape (AlertJob in the spec). */
export interface AlertJobView {
  id: string;
  tenant: string;
  userId: string;
  ruleId: AlertRuleId;
  cycleKey: string;
  nameAlert: string;
  individual: boolean;
  extraData: Record<string, unknown>;
  dueDate: string;
  createdAt: string;
  state: JobState;
  nextRunAt: string | null;
  lastRunAt: string | null;
  lastFinishedAt: string | null;
  failCount: number;
  failReason: string | null;
  failures: { at: string; attempt: number; error: string }[];
}

const isoOrNull = (d: Date | null | undefined): string | null => (d instanceof Date ? d.toISOString() : null);

export function alertJobView(doc: AlertJobDocument): AlertJobView {
  const d = doc.data;
  return {
    id: doc._id.toHexString(),
    tenant: d.tenant,
    userId: d.userId,
    ruleId: d.ruleId,
    cycleKey: d.cycleKey,
    nameAlert: d.nameAlert,
    individual: d.individual,
    extraData: readExtraData(d.extraData),
    dueDate: d.dueDate.toISOString(),
    createdAt: d.createdAt.toISOString(),
    state: alertJobState(doc),
    nextRunAt: isoOrNull(doc.nextRunAt),
    lastRunAt: isoOrNull(doc.lastRunAt),
    lastFinishedAt: isoOrNull(doc.lastFinishedAt),
    failCount: doc.failCount ?? 0,
    failReason: doc.failReason ?? null,
    failures: (d.failures ?? []).map((f) => ({ at: f.at.toISOString(), attempt: f.attempt, error: f.error })),
  };
}
