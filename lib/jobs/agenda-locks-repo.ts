/**
 * Lock hand-back for the Agenda job collections (`alertJobs`, `webhookJobs`).
 */
import type { Db, ObjectId } from 'mongodb';

/**
 * Releases jobs named `jobName` that this worker locked but never started
 * (Agenda's drain() leaves them locked until the lock lifetime runs out), so
 * another worker or a restart picks them up at once. Jobs still running
 * (`runningIds`) are left alone. Returns how many were released.
 */
export async function releaseIdleJobLocks(db: Db, collection: string, jobName: string, workerName: string, runningIds: ObjectId[]): Promise<number> {
  const res = await db
    .collection(collection)
    .updateMany({ name: jobName, lockedAt: { $ne: null }, lastModifiedBy: workerName, _id: { $nin: runningIds } }, { $set: { lockedAt: null } });
  return res.modifiedCount;
}
