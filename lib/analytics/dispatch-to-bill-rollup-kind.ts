/** Dispatch-to-bill's kept days as a kind of kept totals (lib/rollups/rollup-kind.ts). */
import type { RollupKind } from '../rollups/rollup-kind.ts';
import {
  dispatchToBillRollupsReady,
  drainDispatchToBillMarks,
  forgetDispatchToBillRollups,
  markEmptyDispatchToBillStoreBuilt,
  outstandingDispatchToBillMarks,
  rebuildDispatchToBillRollups,
  verifyDispatchToBillRollups,
} from './refresh-dispatch-to-bill-rollups.ts';

export const dispatchToBillRollups: RollupKind = {
  name: 'dispatch-to-bill',
  ready: dispatchToBillRollupsReady,
  rebuild: rebuildDispatchToBillRollups,
  forget: forgetDispatchToBillRollups,
  markEmptyStoreBuilt: markEmptyDispatchToBillStoreBuilt,
  drain: drainDispatchToBillMarks,
  verify: (db, tenant, opts = {}) => verifyDispatchToBillRollups(db, tenant, opts.repair ? { repair: true } : {}),
  outstanding: outstandingDispatchToBillMarks,
};
