/**
 * The tax position's kept months (its figures, lines and DIOT rows) as a kind of kept totals
 * (lib/rollups/marked-rollup-kind.ts): a month is recomputed when a day of it is marked by a
 * write of a financial document (TAX_POSITION_DOCS_SOURCE, lib/finance/financial-doc-days.ts)
 * or of a received CFDI (TAX_POSITION_RECEIVED_SOURCE, lib/received/received-doc-days.ts).
 * And what the answers read through it: their months brought up to date first.
 */
import type { Db } from 'mongodb';
import { financialDocs } from '../db/collections.ts';
import { TAX_POSITION_DOCS_SOURCE } from '../finance/financial-doc-days.ts';
import { tenantsWithDocuments } from '../finance/financial-docs-repo.ts';
import { TAX_POSITION_RECEIVED_SOURCE } from '../received/received-doc-days.ts';
import { receivedDocs, tenantsWithReceivedDocs } from '../received/received-repo.ts';
import { markedRollupKind } from '../rollups/marked-rollup-kind.ts';
import { mxDateString, mxMonthRange } from '../time/mexico-city.ts';
import { TAX_POSITION_ROLLUP_VERSION, type TaxPositionMonthRollup } from './tax-position-rollup.ts';
import { deleteTaxPositionOf, readTaxPositionMonths } from './tax-position-rollups-repo.ts';
import { differingTaxPositionMonths, documentMonthDays, keptTaxPositionMonths, recomputeTaxPositionMonths } from './refresh-tax-position.ts';

export const taxPositionRollups = markedRollupKind({
  name: 'tax-position',
  stateName: 'taxPosition',
  version: TAX_POSITION_ROLLUP_VERSION,
  sources: [TAX_POSITION_DOCS_SOURCE, TAX_POSITION_RECEIVED_SOURCE],
  grain: 'month',
  // Per source: a report reads at most two months (62 days).
  marksPerPass: 400,
  tenants: async (db) => [...new Set([...(await tenantsWithDocuments(db)), ...(await tenantsWithReceivedDocs(db))])].sort(),
  isEmpty: async (db) =>
    !(await financialDocs(db).findOne({}, { projection: { _id: 1 } })) && !(await receivedDocs(db).findOne({}, { projection: { _id: 1 } })),
  documentDays: async (db, tenant) => {
    const { issued, received } = await documentMonthDays(db, tenant);
    return new Map([
      [TAX_POSITION_DOCS_SOURCE, issued],
      [TAX_POSITION_RECEIVED_SOURCE, received],
    ]);
  },
  keptUnits: keptTaxPositionMonths,
  deleteOf: deleteTaxPositionOf,
  // A rebuild's or a verify's run: a quarter's documents per read (each month from its own, computeTaxPositionMonths), as a run of days holds.
  rebuildRunMonths: 3,
  recompute: (db, tenant, run, _ctx, maxTimeMS) => recomputeTaxPositionMonths(db, tenant, run, maxTimeMS),
  differing: (db, tenant, run, _ctx, maxTimeMS) => differingTaxPositionMonths(db, tenant, run, maxTimeMS),
});

/**
 * These kept months of a tenant (at most a few: a report's month and the one before), brought
 * up to date first: months marked by a write and months kept by another version are recomputed.
 * A month absent from the answer holds nothing.
 */
export async function readFreshTaxPositionMonths(
  db: Db,
  tenant: string,
  months: readonly string[],
  maxTimeMS: number,
): Promise<Map<string, TaxPositionMonthRollup>> {
  const sorted = [...new Set(months)].sort();
  if (!sorted.length) return new Map();
  const from = mxDateString(mxMonthRange(sorted[0] as string).start);
  const to = mxDateString(mxMonthRange(sorted[sorted.length - 1] as string).endExclusive - 1);
  await taxPositionRollups.settle(db, tenant, { from, to, maxPasses: 1, maxTimeMS });
  let kept = await readTaxPositionMonths(db, tenant, months, maxTimeMS);
  const stale = kept.filter((k) => k.version !== TAX_POSITION_ROLLUP_VERSION).map((k) => k.month);
  if (stale.length) {
    await taxPositionRollups.recompute(db, tenant, stale, undefined, maxTimeMS);
    kept = await readTaxPositionMonths(db, tenant, months, maxTimeMS);
  }
  return new Map(kept.map((k) => [k.month, k]));
}
