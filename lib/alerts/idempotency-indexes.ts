/** The indexes of `idempotencyKeys` (lib/alerts/idempotency-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs } from '../db/indexes.ts';

export const IDEMPOTENCY_INDEXES: IndexSpecs = {
  // Purges expired records on real MongoDB (the embedded engine never expires anything; readers treat them as absent).
  [COLLECTIONS.idempotency]: [{ key: { expiresAt: 1 }, name: 'expires_ttl', expireAfterSeconds: 0 }],
};
