/**
 * The per-tenant cap on exports queued or running (EXPORT_MAX_ACTIVE), as slots: slot `n` of a
 * tenant is one document whose `_id` is `<tenant>#<n>`, so the unique `_id` admits one holder at a
 * time and two concurrent requests cannot both take the last one (a count then an insert could).
 * A slot is released when its export ends (ready or failed); one whose holder is no longer running
 * is reclaimed by the next request that finds every slot taken (export-slots-repo.ts). Pure.
 */
import type { ObjectId } from 'mongodb';
import type { ExportStatus } from './export-record.ts';

export interface ExportSlot {
  _id: string;
  tenant: string;
  slot: number;
  exportId: ObjectId;
  claimedAt: Date;
}

/**
 * A slot just taken has no export or job yet (they are stored right after it): a slot without them
 * is reclaimed only once it is this old, so a request still on its way keeps it.
 */
export const SLOT_GRACE_MS = 60_000;

export const slotId = (tenant: string, n: number): string => `${tenant}#${n}`;

/** What the reclaim knows of a slot's holder: its export's status (null: no export) and whether its job exists. */
export interface SlotHolder {
  status: ExportStatus | null;
  hasJob: boolean;
}

/**
 * Whether a slot may be taken back: its export has ended (ready, failed, expired), or, past the
 * grace, its export or its job is missing (a request that died between the slot and the export,
 * or a job removed by hand): nothing would ever release it otherwise.
 */
export function reclaimable(slot: Pick<ExportSlot, 'claimedAt'>, holder: SlotHolder, now: Date): boolean {
  if (holder.status !== null && holder.status !== 'queued' && holder.status !== 'running') return true;
  const pastGrace = now.getTime() - slot.claimedAt.getTime() >= SLOT_GRACE_MS;
  return pastGrace && (holder.status === null || !holder.hasJob);
}
