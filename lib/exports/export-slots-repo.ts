/**
 * The tenants' export slots (`exportSlots`, export-slot.ts): taken by an insert the unique `_id`
 * refuses when the slot is held (atomic on real MongoDB and the embedded engine alike), released
 * by deleting the holder's slot (idempotent). Every filter starts with the tenant.
 */
import type { Collection, Db, ObjectId } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { insertUnlessDuplicate } from '../db/duplicate-key.ts';
import type { AgendaJobDocument } from '../jobs/agenda-job.ts';
import { reclaimable, slotId, type ExportSlot } from './export-slot.ts';
import type { ExportDocument } from './export-record.ts';
import type { ExportJobData } from './exports-repo.ts';

const slots = (db: Db): Collection<ExportSlot> => db.collection<ExportSlot>(COLLECTIONS.exportSlots);

/** The tenant's slots as held now (at most EXPORT_MAX_ACTIVE, or a few more while exports of a higher cap before a restart still run). */
const heldSlots = (db: Db, tenant: string): Promise<ExportSlot[]> => slots(db).find({ tenant }, { limit: 2000 }).toArray();

/** Tries the free slots below `max` in turn; true when one was taken for `exportId` (a slot taken meanwhile by another request is refused by its _id). */
async function tryClaim(db: Db, tenant: string, exportId: ObjectId, max: number, held: ExportSlot[]): Promise<boolean> {
  const taken = new Set(held.map((s) => s.slot));
  for (let n = 0; n < max; n++) {
    if (taken.has(n)) continue;
    if (await insertUnlessDuplicate(slots(db), { _id: slotId(tenant, n), tenant, slot: n, exportId, claimedAt: new Date() })) return true;
  }
  return false;
}

/**
 * Takes back those of `held` whose holders no longer run (export-slot.ts `reclaimable`); answers
 * how many. Each is deleted only while it still names the same holder, so a slot taken again
 * meanwhile is left alone.
 */
async function reclaim(db: Db, tenant: string, held: ExportSlot[], now: Date): Promise<number> {
  if (!held.length) return 0;
  const ids = held.map((s) => s.exportId);
  const exports = await db
    .collection<ExportDocument>(COLLECTIONS.exports)
    .find({ tenant, _id: { $in: ids } }, { projection: { status: 1 } })
    .toArray();
  const jobs = await db
    .collection<AgendaJobDocument<ExportJobData>>(COLLECTIONS.exportJobs)
    .find({ 'data.tenant': tenant, 'data.exportId': { $in: ids.map((id) => id.toHexString()) } }, { projection: { 'data.exportId': 1 } })
    .toArray();
  const statusOf = new Map(exports.map((e) => [e._id.toHexString(), e.status]));
  const withJob = new Set(jobs.map((j) => j.data.exportId));
  let freed = 0;
  for (const slot of held) {
    const id = slot.exportId.toHexString();
    if (!reclaimable(slot, { status: statusOf.get(id) ?? null, hasJob: withJob.has(id) }, now)) continue;
    freed += (await slots(db).deleteOne({ tenant, _id: slot._id, exportId: slot.exportId })).deletedCount;
  }
  return freed;
}

/**
 * Takes one of the tenant's `max` slots for `exportId`; when every one is held, reclaims those of
 * exports no longer running and tries once more. False: the cap is reached. Bounded: a read of
 * the tenant's slots and at most `max` inserts a round, two rounds, and the reclaim's reads.
 */
export async function claimExportSlot(db: Db, tenant: string, exportId: ObjectId, max: number): Promise<boolean> {
  const held = await heldSlots(db, tenant);
  if (await tryClaim(db, tenant, exportId, max, held)) return true;
  await reclaim(db, tenant, held, new Date());
  // Read again even when this request freed none: a concurrent one may have reclaimed them.
  return tryClaim(db, tenant, exportId, max, await heldSlots(db, tenant));
}

/** The export's slot is free again (idempotent: a second release, or one for an export that held none, deletes nothing). */
export async function releaseExportSlot(db: Db, tenant: string, exportId: ObjectId): Promise<void> {
  await slots(db).deleteMany({ tenant, exportId });
}
