/** The indexes of `tenantSettings` (lib/settings/settings-repo.ts): one document per tenant, found by `_id`. */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs } from '../db/indexes.ts';

export const SETTINGS_INDEXES: IndexSpecs = {
  // The tenants whose category rules change was cut short, found at start (sparse: only those are in it).
  [COLLECTIONS.tenantSettings]: [{ key: { receivedCategoryRulesPending: 1 }, name: 'pending_category_rules', sparse: true }],
};
