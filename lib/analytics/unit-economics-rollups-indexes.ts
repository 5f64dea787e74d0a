/** The indexes of unit economics' days kept on write (lib/analytics/unit-economics-rollups-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs } from '../db/indexes.ts';

export const UNIT_ECONOMICS_ROLLUP_INDEXES: IndexSpecs = {
  [COLLECTIONS.unitEconomicsRollups]: [{ key: { tenant: 1, day: 1 }, name: 'tenant_day' }],
};
