/** The indexes of dispatch-to-bill's days kept on write and its unbilled index (lib/analytics/dispatch-to-bill-rollups-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs } from '../db/indexes.ts';

export const DISPATCH_TO_BILL_ROLLUP_INDEXES: IndexSpecs = {
  [COLLECTIONS.dispatchToBillDays]: [{ key: { tenant: 1, day: 1, part: 1 }, name: 'tenant_day_part' }],
  [COLLECTIONS.dispatchToBillUnbilled]: [
    // The report's page (oldest delivery first), a run's rewrite (its offload range) and verification.
    { key: { tenant: 1, offload: 1, tripId: 1 }, name: 'tenant_offload_trip' },
    { key: { tenant: 1, client: 1, offload: 1, tripId: 1 }, name: 'tenant_client_offload_trip' },
  ],
};
