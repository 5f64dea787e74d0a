/** The indexes of `exports`, `exportChunks`, `exportJobs` (lib/exports/exports-repo.ts) and `exportSlots` (export-slots-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs } from '../db/indexes.ts';
import { AGENDA_LOCK_INDEX } from '../jobs/agenda-lock-index.ts';

export const EXPORT_INDEXES: IndexSpecs = {
  [COLLECTIONS.exports]: [
    { key: { tenant: 1, createdAt: -1, _id: -1 }, name: 'tenant_created' },
    // The exports still to be built, every tenant's, found when a worker starts (their jobs stored again if missing).
    { key: { status: 1, createdAt: 1 }, name: 'status_created' },
  ],
  [COLLECTIONS.exportChunks]: [{ key: { tenant: 1, exportId: 1, n: 1 }, name: 'tenant_export_n_unique', unique: true }],
  [COLLECTIONS.exportJobs]: [AGENDA_LOCK_INDEX, { key: { 'data.tenant': 1, 'data.exportId': 1 }, name: 'tenant_export' }],
  // A slot is held under its unique _id (<tenant>#<n>); released and reclaimed by its export.
  [COLLECTIONS.exportSlots]: [{ key: { tenant: 1, exportId: 1 }, name: 'tenant_export' }],
};
