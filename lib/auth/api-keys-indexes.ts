/** The indexes of `apiKeys` (lib/auth/api-keys.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs } from '../db/indexes.ts';

export const API_KEY_INDEXES: IndexSpecs = {
  [COLLECTIONS.apiKeys]: [
    { key: { hash: 1 }, name: 'hash_unique', unique: true },
    { key: { tenant: 1, createdAt: 1 }, name: 'tenant_created' },
  ],
};
