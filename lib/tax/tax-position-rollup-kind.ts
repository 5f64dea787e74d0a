/** The tax position's kept months (its figures, lines and DIOT rows) as a kind of kept totals (lib/rollups/rollup-kind.ts). */
import type { RollupKind } from '../rollups/rollup-kind.ts';
import {
  drainTaxPositionMarks,
  forgetTaxPosition,
  markEmptyTaxPositionBuilt,
  outstandingTaxPositionMarks,
  rebuildTaxPosition,
  taxPositionReady,
  verifyTaxPosition,
} from './refresh-tax-position.ts';

export const taxPositionRollups: RollupKind = {
  name: 'tax-position',
  ready: taxPositionReady,
  async rebuild(db, opts = {}) {
    const r = await rebuildTaxPosition(db, {
      ...(opts.tenants ? { tenants: opts.tenants } : {}),
      ...(opts.maxTimeMS !== undefined ? { maxTimeMS: opts.maxTimeMS } : {}),
      ...(opts.stopped ? { stopped: opts.stopped } : {}),
      ...(opts.onProgress ? { onProgress: (p) => opts.onProgress?.({ kind: 'tax-position', ...p }) } : {}),
    });
    return { tenants: r.tenants, units: r.months, stopped: r.stopped };
  },
  forget: forgetTaxPosition,
  markEmptyStoreBuilt: markEmptyTaxPositionBuilt,
  drain: drainTaxPositionMarks,
  async verify(db, tenant, opts = {}) {
    const r = await verifyTaxPosition(db, tenant, opts.repair ? { repair: true } : {});
    return { checked: r.months, mismatched: r.mismatched };
  },
  outstanding: outstandingTaxPositionMarks,
};
