/** Unit economics' kept days as a kind of kept totals (lib/rollups/rollup-kind.ts). */
import type { RollupKind } from '../rollups/rollup-kind.ts';
import {
  drainUnitEconomicsMarks,
  forgetUnitEconomicsRollups,
  markEmptyUnitEconomicsStoreBuilt,
  outstandingUnitEconomicsMarks,
  rebuildUnitEconomicsRollups,
  unitEconomicsRollupsReady,
  verifyUnitEconomicsRollups,
} from './refresh-unit-economics-rollups.ts';

export const unitEconomicsRollups: RollupKind = {
  name: 'unit-economics',
  ready: unitEconomicsRollupsReady,
  rebuild: rebuildUnitEconomicsRollups,
  forget: forgetUnitEconomicsRollups,
  markEmptyStoreBuilt: markEmptyUnitEconomicsStoreBuilt,
  drain: drainUnitEconomicsMarks,
  verify: (db, tenant, opts = {}) => verifyUnitEconomicsRollups(db, tenant, opts.repair ? { repair: true } : {}),
  outstanding: outstandingUnitEconomicsMarks,
};
