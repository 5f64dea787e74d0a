/** The indexes of the tax position's totals kept on write (lib/tax/tax-position-rollups-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs } from '../db/indexes.ts';

export const TAX_POSITION_ROLLUP_INDEXES: IndexSpecs = {
  // Read by _id (tenant|month) with the tenant; a tenant's months in order (verification).
  [COLLECTIONS.taxPositionMonths]: [{ key: { tenant: 1, month: 1 }, name: 'tenant_month' }],
  // A page of one figure's lines (or the DIOT rows) of a month: a range of ranks. Also a month's lines whole.
  [COLLECTIONS.taxPositionLines]: [{ key: { tenant: 1, month: 1, figure: 1, rank: 1 }, name: 'tenant_month_figure_rank' }],
};
