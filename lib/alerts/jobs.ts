/**
 * Alert jobs as stored in the `alertJobs` collection: Agenda job documents
 * (name, nextRunAt, lockedAt, failCount, ...) whose `data` carries the alert.
 *
 * Uniqueness: `data.jobKey` = sha256 of (tenant, ruleId, cycleKey, userId) under
 * a UNIQUE index (lib/alerts/alert-indexes.ts). Jobs are inserted directly, all fields
 * Agenda's MongoBackend writes for a new one-time job included, so scheduling
 * needs no running Agenda and is one `insertMany` for up to 1,000 users.
 */
import { readExtraData, type StoredExtraData } from './extra-data.ts';
import { createHash } from 'node:crypto';
import type { ObjectId } from 'mongodb';
import { oneTimeJobDocument, type AgendaJobDocument } from '../jobs/agenda-job.ts';
import type { AlertRuleId } from './rules.ts';

/** The one Agenda job definition of the alerts worker. */
export const ALERT_JOB_NAME = 'alert:evaluate';

export interface JobFailure {
  at: Date;
  attempt: number;
  error: string;
}

/** Who and what an alert is for: the same fields on the job, its API view and its record. */
export interface AlertSubject {
  tenant: string;
  userId: string;
  ruleId: AlertRuleId;
  cycleKey: string;
  nameAlert: string;
  individual: boolean;
}

/** The subject's fields alone, in their API order. */
export const alertSubject = (s: AlertSubject): AlertSubject => ({
  tenant: s.tenant,
  userId: s.userId,
  ruleId: s.ruleId,
  cycleKey: s.cycleKey,
  nameAlert: s.nameAlert,
  individual: s.individual,
});

export interface AlertJobData extends AlertSubject {
  /** sha256(JSON [tenant, ruleId, cycleKey, userId]); unique index. */
  jobKey: string;
  /** Serialised (see extra-data.ts). */
  extraData: StoredExtraData;
  dueDate: Date;
  createdAt: Date;
  failures: JobFailure[];
}

/** The stored document (Agenda's fields + ours). */
export type AlertJobDocument = AgendaJobDocument<AlertJobData>;

export function alertJobKey(tenant: string, ruleId: string, cycleKey: string, userId: string): string {
  return createHash('sha256')
    .update(JSON.stringify([tenant, ruleId, cycleKey, userId]), 'utf8')
    .digest('hex');
}

/** A new one-time job, due at `data.dueDate`. */
export function newAlertJobDocument(_id: ObjectId, data: AlertJobData): AlertJobDocument {
  return oneTimeJobDocument(_id, ALERT_JOB_NAME, data, data.dueDate);
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

/** API shape (AlertJob in the spec). */
export interface AlertJobView extends AlertSubject {
  id: string;
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
    ...alertSubject(d),
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
