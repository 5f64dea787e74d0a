/**
 * Agenda 6 job documents as MongoBackend stores them, shared by the alert jobs
 * (`alertJobs`) and the webhook delivery jobs (`webhookJobs`). Both insert
 * their one-time jobs directly (one insertMany, no running Agenda needed), so
 * the new document must carry every field MongoBackend.saveJob writes.
 */
import type { ObjectId } from 'mongodb';

/** The stored document: Agenda's fields around the job's own `data`. */
export interface AgendaJobDocument<D> {
  _id: ObjectId;
  name: string;
  type: 'normal';
  priority: number;
  nextRunAt: Date | null;
  data: D;
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

/** A new one-time job due at `nextRunAt`, shaped (and ordered) exactly as MongoBackend.saveJob inserts one. */
export function oneTimeJobDocument<D>(_id: ObjectId, name: string, data: D, nextRunAt: Date): AgendaJobDocument<D> {
  return {
    _id,
    name,
    type: 'normal',
    priority: 0,
    nextRunAt,
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
