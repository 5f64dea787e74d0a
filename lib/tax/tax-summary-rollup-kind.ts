/** The tax summary's kept days and months as a kind of kept totals (lib/rollups/rollup-kind.ts). */
import type { RollupKind } from '../rollups/rollup-kind.ts';
import {
  drainTaxMarks,
  forgetTaxRollups,
  markEmptyStoreBuilt,
  outstandingTaxMarks,
  rebuildTaxRollups,
  taxRollupsReady,
  verifyTaxRollups,
} from './refresh-tax-rollups.ts';

export const taxSummaryRollups: RollupKind = {
  name: 'tax-summary',
  ready: taxRollupsReady,
  async rebuild(db, opts = {}) {
    const r = await rebuildTaxRollups(db, {
      ...(opts.tenants ? { tenants: opts.tenants } : {}),
      ...(opts.maxTimeMS !== undefined ? { maxTimeMS: opts.maxTimeMS } : {}),
      ...(opts.stopped ? { stopped: opts.stopped } : {}),
      ...(opts.onProgress ? { onProgress: (p) => opts.onProgress?.({ kind: 'tax-summary', ...p }) } : {}),
    });
    return { tenants: r.tenants, units: r.days, stopped: r.stopped };
  },
  forget: forgetTaxRollups,
  markEmptyStoreBuilt,
  drain: drainTaxMarks,
  async verify(db, tenant, opts = {}) {
    const r = await verifyTaxRollups(db, tenant, opts.repair ? { repair: true } : {});
    return { checked: r.days, mismatched: r.mismatched };
  },
  outstanding: outstandingTaxMarks,
};
