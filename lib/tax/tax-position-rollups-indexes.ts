/** The indexes of the tax position's totals kept on write (lib/tax/tax-position-rollups-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs, RetiredIndexes } from '../db/indexes.ts';

export const TAX_POSITION_ROLLUP_INDEXES: IndexSpecs = {
  // Read by _id (tenant|day) with the tenant; a month's days (a month added up), a tenant's days (verification).
  [COLLECTIONS.taxPositionDays]: [{ key: { tenant: 1, day: 1 }, name: 'tenant_day' }],
  // Read by _id (tenant|month) with the tenant; a tenant's months in order (verification).
  [COLLECTIONS.taxPositionMonths]: [{ key: { tenant: 1, month: 1 }, name: 'tenant_month' }],
  // A page of one figure's lines of a day (or of a month's DIOT rows): a range of ranks. Also a day's or a month's whole.
  [COLLECTIONS.taxPositionLines]: [{ key: { tenant: 1, bucket: 1, figure: 1, rank: 1 }, name: 'tenant_bucket_figure_rank' }],
};

/** Version 1 kept a month's lines by month and rank in it (a write shifted every later rank). */
export const RETIRED_TAX_POSITION_INDEXES: RetiredIndexes = {
  [COLLECTIONS.taxPositionLines]: ['tenant_month_figure_rank'],
};
