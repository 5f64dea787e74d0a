/** The discounts and shrinkage audit's kept days as a kind of kept totals (lib/rollups/rollup-kind.ts). */
import type { RollupKind } from '../rollups/rollup-kind.ts';
import {
  discountsShrinkageRollupsReady,
  drainDiscountsShrinkageMarks,
  forgetDiscountsShrinkageRollups,
  markEmptyDiscountsShrinkageStoreBuilt,
  outstandingDiscountsShrinkageMarks,
  rebuildDiscountsShrinkageRollups,
  verifyDiscountsShrinkageRollups,
} from './refresh-discounts-shrinkage-rollups.ts';

export const discountsShrinkageRollups: RollupKind = {
  name: 'discounts-shrinkage',
  ready: discountsShrinkageRollupsReady,
  rebuild: rebuildDiscountsShrinkageRollups,
  forget: forgetDiscountsShrinkageRollups,
  markEmptyStoreBuilt: markEmptyDiscountsShrinkageStoreBuilt,
  drain: drainDiscountsShrinkageMarks,
  verify: (db, tenant, opts = {}) => verifyDiscountsShrinkageRollups(db, tenant, opts.repair ? { repair: true } : {}),
  outstanding: outstandingDiscountsShrinkageMarks,
};
