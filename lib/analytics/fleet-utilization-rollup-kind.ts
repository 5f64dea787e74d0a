/** Fleet utilization's kept days as a kind of kept totals (lib/rollups/rollup-kind.ts). */
import type { RollupKind } from '../rollups/rollup-kind.ts';
import {
  drainFleetMarks,
  fleetRollupsReady,
  forgetFleetRollups,
  markEmptyFleetStoreBuilt,
  outstandingFleetMarks,
  rebuildFleetRollups,
  verifyFleetRollups,
} from './refresh-fleet-rollups.ts';

export const fleetUtilizationRollups: RollupKind = {
  name: 'fleet-utilization',
  ready: fleetRollupsReady,
  rebuild: rebuildFleetRollups,
  forget: forgetFleetRollups,
  markEmptyStoreBuilt: markEmptyFleetStoreBuilt,
  drain: drainFleetMarks,
  verify: (db, tenant, opts = {}) => verifyFleetRollups(db, tenant, opts.repair ? { repair: true } : {}),
  outstanding: outstandingFleetMarks,
};
