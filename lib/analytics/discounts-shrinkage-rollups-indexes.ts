/** The indexes of the discounts and shrinkage audit's kept days and findings (lib/analytics/discounts-shrinkage-rollups-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs } from '../db/indexes.ts';

const WORST_FIRST = { valueC: -1, pct: -1, legId: 1, tripId: 1 } as const;

export const DISCOUNTS_SHRINKAGE_ROLLUP_INDEXES: IndexSpecs = {
  [COLLECTIONS.discountDays]: [{ key: { tenant: 1, day: 1 }, name: 'tenant_day' }],
  [COLLECTIONS.shrinkageDays]: [{ key: { tenant: 1, day: 1 }, name: 'tenant_day' }],
  [COLLECTIONS.shrinkageFindings]: [
    // A period's findings (few: sorted in memory), a recomputed day's stale ones.
    { key: { tenant: 1, day: 1 }, name: 'tenant_day' },
    { key: { tenant: 1, client: 1, day: 1 }, name: 'tenant_client_day' },
    // Many findings in the period: the first `limit` in the report's order, the period filtered on the way.
    { key: { tenant: 1, ...WORST_FIRST }, name: 'tenant_worst' },
    { key: { tenant: 1, client: 1, ...WORST_FIRST }, name: 'tenant_client_worst' },
  ],
};
