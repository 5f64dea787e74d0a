/**
 * The tax position's kept days and months (their figures, lines and DIOT rows) as a kind of kept
 * totals (lib/rollups/marked-rollup-kind.ts): a day is recomputed when it is marked by a write of
 * a financial document (TAX_POSITION_DOCS_SOURCE, lib/finance/financial-doc-days.ts) or of a
 * received CFDI (TAX_POSITION_RECEIVED_SOURCE, lib/received/received-doc-days.ts), and its month
 * (marked under TAX_POSITION_MONTHS_SOURCE when the day is) is added up again from its days.
 * And what the answers read through it: their months brought up to date first.
 */
import type { Db } from 'mongodb';
import { financialDocs } from '../db/collections.ts';
import { TAX_POSITION_DOCS_SOURCE } from '../finance/financial-doc-days.ts';
import { tenantsWithDocuments } from '../finance/financial-docs-repo.ts';
import { TAX_POSITION_RECEIVED_SOURCE } from '../received/received-doc-days.ts';
import { receivedDocs, tenantsWithReceivedDocs } from '../received/received-repo.ts';
import { markedRollupKind } from '../rollups/marked-rollup-kind.ts';
import { mxAddDays, mxDateString, mxMonthRange } from '../time/mexico-city.ts';
import { TAX_POSITION_ROLLUP_VERSION, type TaxPositionMonthRollup } from './tax-position-rollup.ts';
import { deleteTaxPositionOf, readTaxPositionMonths } from './tax-position-rollups-repo.ts';
import {
  differingTaxPositionDays,
  differingTaxPositionMonths,
  documentDays,
  keptTaxPositionDays,
  keptTaxPositionMonths,
  recomputeTaxPositionDays,
  recomputeTaxPositionMonths,
} from './refresh-tax-position.ts';

/** Marks of months ('YYYY-MM') whose days changed: set when a day is recomputed. */
export const TAX_POSITION_MONTHS_SOURCE = 'taxPositionMonths';

export const taxPositionRollups = markedRollupKind({
  name: 'tax-position',
  stateName: 'taxPosition',
  version: TAX_POSITION_ROLLUP_VERSION,
  sources: [TAX_POSITION_DOCS_SOURCE, TAX_POSITION_RECEIVED_SOURCE],
  grain: 'day',
  // Per source: a report reads at most two months (62 days).
  marksPerPass: 400,
  // A run's days are computed each from the lines dated on it (computeTaxPositionDays): a rebuild's runs skip the days without any.
  rebuildAcrossGaps: true,
  tenants: async (db) => [...new Set([...(await tenantsWithDocuments(db)), ...(await tenantsWithReceivedDocs(db))])].sort(),
  isEmpty: async (db) =>
    !(await financialDocs(db).findOne({}, { projection: { _id: 1 } })) && !(await receivedDocs(db).findOne({}, { projection: { _id: 1 } })),
  documentDays: async (db, tenant) => {
    const { issued, received } = await documentDays(db, tenant);
    return new Map([
      [TAX_POSITION_DOCS_SOURCE, issued],
      [TAX_POSITION_RECEIVED_SOURCE, received],
    ]);
  },
  keptUnits: keptTaxPositionDays,
  deleteOf: deleteTaxPositionOf,
  recompute: (db, tenant, run, _ctx, maxTimeMS) => recomputeTaxPositionDays(db, tenant, run, maxTimeMS),
  differing: (db, tenant, run, _ctx, maxTimeMS) => differingTaxPositionDays(db, tenant, run, maxTimeMS),
  months: {
    source: TAX_POSITION_MONTHS_SOURCE,
    // A month is added up from its kept days: a few small reads each.
    runMonths: 1,
    recompute: (db, tenant, months, _ctx, maxTimeMS) => recomputeTaxPositionMonths(db, tenant, months, maxTimeMS),
    differing: (db, tenant, months, _ctx, maxTimeMS) => differingTaxPositionMonths(db, tenant, months, maxTimeMS),
    keptMonths: keptTaxPositionMonths,
  },
});

/**
 * These kept months of a tenant (at most a few: a report's month and the one before), brought
 * up to date first: days marked by a write are recomputed, then the months they mark; a month
 * kept by another version is recomputed with its days. A month absent from the answer holds
 * nothing.
 */
export async function readFreshTaxPositionMonths(
  db: Db,
  tenant: string,
  months: readonly string[],
  maxTimeMS: number,
): Promise<Map<string, TaxPositionMonthRollup>> {
  const sorted = [...new Set(months)].sort();
  const firstMonth = sorted[0];
  const lastMonth = sorted[sorted.length - 1];
  if (firstMonth === undefined || lastMonth === undefined) return new Map();
  const from = mxDateString(mxMonthRange(firstMonth).start);
  const to = mxDateString(mxMonthRange(lastMonth).endExclusive - 1);
  await taxPositionRollups.settle(db, tenant, { from, to, maxPasses: 1, maxTimeMS });
  await taxPositionRollups.settleMonths(db, tenant, { from: firstMonth, to: lastMonth, maxTimeMS });
  let kept = await readTaxPositionMonths(db, tenant, sorted, maxTimeMS);
  const stale = kept.filter((k) => k.version !== TAX_POSITION_ROLLUP_VERSION).map((k) => k.month);
  if (stale.length) {
    const days: string[] = [];
    for (const month of stale) for (let day = `${month}-01`; day.startsWith(month); day = mxAddDays(day, 1)) days.push(day);
    await taxPositionRollups.recompute(db, tenant, days, undefined, maxTimeMS);
    await recomputeTaxPositionMonths(db, tenant, stale, maxTimeMS);
    kept = await readTaxPositionMonths(db, tenant, sorted, maxTimeMS);
  }
  return new Map(kept.map((k) => [k.month, k]));
}
