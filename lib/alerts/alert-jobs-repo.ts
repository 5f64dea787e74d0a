/**
 * Alert jobs (`alertJobs`, shared with Agenda) and alert records (`alerts`).
 * Tenant first in every filter: `data.tenant` for jobs, `tenant` for records.
 */
import { MongoBulkWriteError, ObjectId, type Collection, type Db, type Filter } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { ensureIndexesOnce, joinIndexSpecs } from '../db/indexes.ts';
import { ALERT_INDEXES } from './alert-indexes.ts';
import { IDEMPOTENCY_INDEXES } from './idempotency-indexes.ts';
import { releaseIdleJobLocks } from '../jobs/agenda-locks-repo.ts';
import { ALERT_JOB_NAME, type AlertJobDocument, type JobFailure, type JobState } from './jobs.ts';
import { findSortedPage, storedDateIdPosition } from '../db/find-page.ts';
import type { KeysetSort, PageQuery } from '../shared/keyset.ts';
import { DUPLICATE_KEY, insertUnlessDuplicate } from '../db/duplicate-key.ts';
import type { AlertRecordDocument } from './records.ts';

export const alertJobs = (db: Db): Collection<AlertJobDocument> => db.collection<AlertJobDocument>(COLLECTIONS.alertJobs);
export const alertRecords = (db: Db): Collection<AlertRecordDocument> => db.collection<AlertRecordDocument>(COLLECTIONS.alerts);

/** Failed attempts kept on a job (oldest dropped first). */
export const MAX_RECORDED_FAILURES = 10;

/** The job states of `alertJobState` (lib/alerts/jobs.ts) as query conditions (no $expr: the embedded engine needs plain filters). */
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

/**
 * Creates the alert indexes once per Db handle (idempotent on the server).
 * Scheduling calls it first: job uniqueness rests on the unique `data.jobKey`
 * index, so it must exist even where the service's start-up (lib/service-indexes.ts) never ran.
 */
export const ensureAlertIndexes = ensureIndexesOnce(joinIndexSpecs(ALERT_INDEXES, IDEMPOTENCY_INDEXES));

export interface InsertJobsResult {
  /** Positions (in `docs`) that were inserted. */
  inserted: number[];
  /** Positions that hit the unique `data.jobKey` index. */
  duplicates: number[];
}

/**
 * Unordered bulk insert; duplicate-key failures are reported per position, any
 * other write error is thrown. Relies on `writeErrors` only: the embedded
 * engine's bulk result counts failed documents as inserted.
 */
export async function insertAlertJobs(db: Db, docs: AlertJobDocument[]): Promise<InsertJobsResult> {
  if (docs.length === 0) return { inserted: [], duplicates: [] };
  try {
    await alertJobs(db).insertMany(docs, { ordered: false, writeConcern: { w: 'majority' } });
    return { inserted: docs.map((_, i) => i), duplicates: [] };
  } catch (err) {
    if (!(err instanceof MongoBulkWriteError)) throw err;
    const writeErrors = [err.writeErrors].flat();
    const other = writeErrors.find((w) => w.code !== DUPLICATE_KEY);
    if (other) throw err;
    const failed = new Set(writeErrors.map((w) => w.index));
    const inserted: number[] = [];
    const duplicates: number[] = [];
    docs.forEach((_, i) => (failed.has(i) ? duplicates : inserted).push(i));
    return { inserted, duplicates };
  }
}

/**
 * The tenant's alert jobs not yet run to their end: scheduled and retrying (a next run) and running (locked: Agenda
 * clears nextRunAt when a run starts, and when a job is done).
 */
export function countActiveAlertJobs(db: Db, tenant: string, maxTimeMS: number): Promise<number> {
  return alertJobs(db).countDocuments(
    { 'data.tenant': tenant, name: ALERT_JOB_NAME, $or: [{ nextRunAt: { $ne: null } }, { lockedAt: { $ne: null } }] },
    { maxTimeMS },
  );
}

/** Existing jobs by key (id and key only). */
export async function findAlertJobIdsByKeys(db: Db, tenant: string, keys: string[]): Promise<Map<string, ObjectId>> {
  const out = new Map<string, ObjectId>();
  if (keys.length === 0) return out;
  const found = await alertJobs(db)
    .find({ 'data.tenant': tenant, 'data.jobKey': { $in: keys } }, { projection: { _id: 1, 'data.jobKey': 1 } })
    .toArray();
  for (const doc of found) out.set(doc.data.jobKey, doc._id);
  return out;
}

export interface AlertJobFilter {
  ruleId?: string;
  cycleKey?: string;
  userId?: string;
  state?: JobState;
}

/** The jobs' list order: newest first (the sort of every `tenant_name_…_created` index). */
export const ALERT_JOB_SORT = [
  { field: 'data.createdAt', dir: -1 },
  { field: '_id', dir: -1 },
] as const satisfies KeysetSort;

export async function findAlertJobs(
  db: Db,
  tenant: string,
  f: AlertJobFilter,
  page: PageQuery,
  maxTimeMS: number,
): Promise<{ total: number | null; docs: AlertJobDocument[] }> {
  const and: Filter<AlertJobDocument>[] = [{ 'data.tenant': tenant, name: ALERT_JOB_NAME }];
  if (f.ruleId !== undefined) and.push({ 'data.ruleId': f.ruleId });
  if (f.cycleKey !== undefined) and.push({ 'data.cycleKey': f.cycleKey });
  if (f.userId !== undefined) and.push({ 'data.userId': f.userId });
  if (f.state !== undefined) and.push(alertJobStateFilter(f.state));
  const q: Filter<AlertJobDocument> = and.length === 1 ? and[0]! : { $and: and };
  return findSortedPage(alertJobs(db), q, storedDateIdPosition(page), maxTimeMS);
}

/** Deletes the tenant's job; null when there is none with this id for this tenant. */
export async function deleteAlertJob(db: Db, tenant: string, id: string): Promise<AlertJobDocument | null> {
  if (!ObjectId.isValid(id) || !/^[0-9a-fA-F]{24}$/.test(id)) return null;
  return alertJobs(db).findOneAndDelete({ _id: new ObjectId(id), 'data.tenant': tenant, name: ALERT_JOB_NAME });
}

/** Appends a failed attempt to the job (the last MAX_RECORDED_FAILURES are kept). */
export async function recordAlertJobFailure(db: Db, id: ObjectId, failure: JobFailure): Promise<void> {
  await alertJobs(db).updateOne({ _id: id }, { $push: { 'data.failures': { $each: [failure], $slice: -MAX_RECORDED_FAILURES } } });
}

/** Alert jobs this worker locked but never started go back to the pool (see releaseIdleJobLocks). */
export const releaseIdleLocks = (db: Db, workerName: string, runningIds: ObjectId[]): Promise<number> =>
  releaseIdleJobLocks(db, COLLECTIONS.alertJobs, ALERT_JOB_NAME, workerName, runningIds);

/** Stores an alert record; false when the job's record already exists (a re-run after an expired lock). */
export function insertAlertRecord(db: Db, record: AlertRecordDocument): Promise<boolean> {
  return insertUnlessDuplicate(alertRecords(db), record);
}

export function findAlertRecord(db: Db, id: string): Promise<AlertRecordDocument | null> {
  return alertRecords(db).findOne({ _id: id });
}

export interface AlertRecordFilter {
  userId?: string;
  ruleId?: string;
  cycleKey?: string;
  status?: 'triggered' | 'clear';
}

/** The records' list order: newest evaluation first (the sort of every `tenant_…_evaluated` index). */
export const ALERT_RECORD_SORT = [
  { field: 'evaluatedAt', dir: -1 },
  { field: '_id', dir: -1 },
] as const satisfies KeysetSort;

export async function findAlertRecords(
  db: Db,
  tenant: string,
  f: AlertRecordFilter,
  page: PageQuery,
  maxTimeMS: number,
): Promise<{ total: number | null; docs: AlertRecordDocument[] }> {
  const q: Filter<AlertRecordDocument> = { tenant };
  if (f.userId !== undefined) q.userId = f.userId;
  if (f.ruleId !== undefined) q.ruleId = f.ruleId as AlertRecordDocument['ruleId'];
  if (f.cycleKey !== undefined) q.cycleKey = f.cycleKey;
  if (f.status !== undefined) q.status = f.status;
  return findSortedPage(
    alertRecords(db),
    q,
    storedDateIdPosition(page, (v) => v),
    maxTimeMS,
  );
}
