/**
 * The as-of reports' open items and forecast days as a kind of kept totals
 * (lib/rollups/marked-rollup-kind.ts), and the settle a report does before it reads them.
 */
import type { Db } from 'mongodb';
import { financialDocs } from '../db/collections.ts';
import { RECEIVABLES_SOURCE } from '../finance/financial-doc-days.ts';
import { financialDocHistoryDays, tenantsWithDocuments } from '../finance/financial-docs-repo.ts';
import { markedRollupKind } from '../rollups/marked-rollup-kind.ts';
import { RECEIVABLES_ROLLUP_VERSION } from './receivables-day.ts';
import { deleteReceivablesRollupsOf } from './receivables-rollups-repo.ts';
import { differingReceivablesDays, keptReceivablesDays, recomputeReceivablesDays } from './refresh-receivables-rollups.ts';

/** Passes a report settles before it reads (400 days each): writes racing it leave marks the drain settles. */
const MAX_PASSES = 50;

export const receivablesRollups = markedRollupKind({
  name: 'receivables',
  stateName: 'receivables',
  version: RECEIVABLES_ROLLUP_VERSION,
  sources: [RECEIVABLES_SOURCE],
  grain: 'day',
  marksPerPass: 400,
  // A run's days are computed each from its own day's documents (computeReceivablesDays): a rebuild's runs skip the days without any.
  rebuildAcrossGaps: true,
  tenants: tenantsWithDocuments,
  isEmpty: async (db) => !(await financialDocs(db).findOne({}, { projection: { _id: 1 } })),
  documentDays: async (db, tenant) => new Map([[RECEIVABLES_SOURCE, (await financialDocHistoryDays(db, tenant)).touched]]),
  keptUnits: keptReceivablesDays,
  deleteOf: deleteReceivablesRollupsOf,
  recompute: (db, tenant, run, _ctx, maxTimeMS) => recomputeReceivablesDays(db, tenant, run, maxTimeMS),
  differing: (db, tenant, run, _ctx, maxTimeMS) => differingReceivablesDays(db, tenant, run, maxTimeMS),
});

/** Settles a tenant's marked days up to `lastDay` (an as-of report reads invoices of any age), in passes. Answers how many marks it settled. */
export function settleReceivablesMarks(db: Db, tenant: string, lastDay: string, maxTimeMS: number): Promise<number> {
  return receivablesRollups.settle(db, tenant, { from: '0000-00-00', to: lastDay, maxPasses: MAX_PASSES, maxTimeMS });
}
