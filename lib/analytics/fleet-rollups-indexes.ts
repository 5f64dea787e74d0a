/** The indexes of fleet utilization's days kept on write (lib/analytics/fleet-rollups-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs } from '../db/indexes.ts';

export const FLEET_ROLLUP_INDEXES: IndexSpecs = {
  [COLLECTIONS.fleetRollups]: [{ key: { tenant: 1, day: 1 }, name: 'tenant_day' }],
};
