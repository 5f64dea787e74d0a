/**
 * The exports' store: the requests (`exports`), their files in chunks (`exportChunks`, in order
 * `n`, read back as a stream) and the worker's Agenda jobs (`exportJobs`, job _id = export _id).
 * Every filter starts with the tenant.
 */
import { Binary, ObjectId, type Collection, type Db } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { findSortedPage, storedDateIdPosition } from '../db/find-page.ts';
import type { PageQuery } from '../shared/keyset.ts';
import { ensureIndexesOnce } from '../db/indexes.ts';
import { insertUnlessDuplicate } from '../db/duplicate-key.ts';
import { oneTimeJobDocument, type AgendaJobDocument } from '../jobs/agenda-job.ts';
import { releaseIdleJobLocks } from '../jobs/agenda-locks-repo.ts';
import { EXPORT_INDEXES } from './exports-indexes.ts';
import type { ExportChunk, ExportDocument, ExportFile } from './export-record.ts';

export const EXPORT_JOB_NAME = 'export';
export interface ExportJobData {
  exportId: string;
  tenant: string;
}

export const exportsCollection = (db: Db): Collection<ExportDocument> => db.collection<ExportDocument>(COLLECTIONS.exports);
const chunks = (db: Db): Collection<ExportChunk> => db.collection<ExportChunk>(COLLECTIONS.exportChunks);
const jobs = (db: Db): Collection<AgendaJobDocument<ExportJobData>> => db.collection<AgendaJobDocument<ExportJobData>>(COLLECTIONS.exportJobs);

export const ensureExportIndexes = ensureIndexesOnce(EXPORT_INDEXES);

const hexId = (id: string): ObjectId | null => (/^[0-9a-fA-F]{24}$/.test(id) ? new ObjectId(id) : null);

/** The export's record, then its job: a request is answered only once both are stored. */
export async function insertExport(db: Db, doc: ExportDocument, runAt: Date): Promise<void> {
  await ensureExportIndexes(db);
  await exportsCollection(db).insertOne(doc);
  await insertUnlessDuplicate(jobs(db), oneTimeJobDocument(doc._id, EXPORT_JOB_NAME, { exportId: doc._id.toHexString(), tenant: doc.tenant }, runAt));
}

/**
 * The exports still to be built whose job is missing (the process died between the record and its
 * job): their jobs stored again, to run now. Once per worker start; a job that exists is left as it
 * is. Answers how many were stored.
 */
export async function requeueExportsWithoutJob(db: Db, runAt: Date): Promise<number> {
  await ensureExportIndexes(db);
  let stored = 0;
  const pending = exportsCollection(db).find({ status: { $in: ['queued', 'running'] } }, { projection: { _id: 1, tenant: 1 } });
  for await (const doc of pending) {
    const job = oneTimeJobDocument(doc._id, EXPORT_JOB_NAME, { exportId: doc._id.toHexString(), tenant: doc.tenant }, runAt);
    if (await insertUnlessDuplicate(jobs(db), job)) stored++;
  }
  return stored;
}

export async function findExport(db: Db, tenant: string, id: string): Promise<ExportDocument | null> {
  const _id = hexId(id);
  return _id ? exportsCollection(db).findOne({ tenant, _id }) : null;
}

export function findExports(db: Db, tenant: string, page: PageQuery, maxTimeMS: number) {
  return findSortedPage(exportsCollection(db), { tenant }, storedDateIdPosition(page), maxTimeMS);
}

/** A run starts: from scratch (rows 0, no file), whatever an earlier run left. Null when the export is no longer to be built. */
export async function startExportRun(db: Db, tenant: string, _id: ObjectId, now: Date): Promise<ExportDocument | null> {
  return exportsCollection(db).findOneAndUpdate(
    { tenant, _id, status: { $in: ['queued', 'running'] } },
    { $set: { status: 'running', startedAt: now, rows: 0, total: null, file: null, error: null }, $inc: { attempts: 1 } },
    { returnDocument: 'after' },
  );
}

export async function recordExportProgress(db: Db, tenant: string, _id: ObjectId, rows: number, total: number | null): Promise<void> {
  await exportsCollection(db).updateOne({ tenant, _id, status: 'running' }, { $set: { rows, total } });
}

export async function finishExport(
  db: Db,
  tenant: string,
  _id: ObjectId,
  outcome: { status: 'ready'; file: ExportFile; rows: number; total: number; expiresAt: Date; syncFrom: Date | null } | { status: 'failed'; error: string },
  now: Date,
): Promise<ExportDocument | null> {
  const fields =
    outcome.status === 'ready'
      ? { file: outcome.file, rows: outcome.rows, total: outcome.total, expiresAt: outcome.expiresAt, syncFrom: outcome.syncFrom }
      : { error: outcome.error };
  return exportsCollection(db).findOneAndUpdate(
    { tenant, _id, status: 'running' },
    { $set: { status: outcome.status, finishedAt: now, ...fields } },
    { returnDocument: 'after' },
  );
}

/** Past its expiry: the file's chunks are deleted, the record stays (status `expired`). */
export async function expireExport(db: Db, tenant: string, _id: ObjectId): Promise<void> {
  await exportsCollection(db).updateOne({ tenant, _id, status: 'ready' }, { $set: { status: 'expired' } });
  await deleteExportChunks(db, tenant, _id);
}

export async function deleteExportChunks(db: Db, tenant: string, exportId: ObjectId): Promise<void> {
  await chunks(db).deleteMany({ tenant, exportId });
}

export async function insertExportChunk(db: Db, tenant: string, exportId: ObjectId, n: number, data: Buffer): Promise<void> {
  await chunks(db).insertOne({ _id: new ObjectId(), tenant, exportId, n, data: new Binary(data) });
}

/** The file's chunks in order, a few at a time. */
export async function* readExportChunks(db: Db, tenant: string, exportId: ObjectId): AsyncGenerator<Buffer> {
  const cursor = chunks(db).find({ tenant, exportId }, { sort: { n: 1 }, batchSize: 4 });
  try {
    for await (const chunk of cursor) yield Buffer.from(chunk.data.read(0, chunk.data.length()));
  } finally {
    await cursor.close();
  }
}

export function releaseIdleExportLocks(db: Db, workerName: string, runningIds: ObjectId[]): Promise<number> {
  return releaseIdleJobLocks(db, COLLECTIONS.exportJobs, EXPORT_JOB_NAME, workerName, runningIds);
}
