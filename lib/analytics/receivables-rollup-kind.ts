/** The as-of reports' open items and forecast days as a kind of kept totals (lib/rollups/rollup-kind.ts). */
import type { RollupKind } from '../rollups/rollup-kind.ts';
import {
  drainReceivablesMarks,
  forgetReceivablesRollups,
  markEmptyReceivablesStoreBuilt,
  outstandingReceivablesMarks,
  rebuildReceivablesRollups,
  receivablesRollupsReady,
  verifyReceivablesRollups,
} from './refresh-receivables-rollups.ts';

export const receivablesRollups: RollupKind = {
  name: 'receivables',
  ready: receivablesRollupsReady,
  async rebuild(db, opts = {}) {
    const r = await rebuildReceivablesRollups(db, opts);
    return { tenants: r.tenants, units: r.days, stopped: r.stopped };
  },
  forget: forgetReceivablesRollups,
  markEmptyStoreBuilt: markEmptyReceivablesStoreBuilt,
  drain: drainReceivablesMarks,
  async verify(db, tenant, opts = {}) {
    const r = await verifyReceivablesRollups(db, tenant, opts.repair ? { repair: true } : {});
    return { checked: r.days, mismatched: r.mismatched };
  },
  outstanding: outstandingReceivablesMarks,
};
