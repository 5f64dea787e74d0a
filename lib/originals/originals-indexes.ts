/** The indexes of `cfdiOriginals` (lib/originals/originals-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs } from '../db/indexes.ts';

export const ORIGINAL_INDEXES: IndexSpecs = {
  // A UUID's original: the CFDI itself before an acknowledgement naming it, the latest import first.
  [COLLECTIONS.cfdiOriginals]: [{ key: { tenant: 1, uuids: 1, kind: 1, importedAt: -1 }, name: 'tenant_uuids_kind_imported' }],
};
