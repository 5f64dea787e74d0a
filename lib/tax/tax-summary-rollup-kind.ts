/**
 * The tax summary's kept days and months as a kind of kept totals
 * (lib/rollups/marked-rollup-kind.ts): days marked by every financial-document write
 * (FINANCIAL_DOCS_SOURCE), each recomputed on both bases (the invoice-basis day, and the day's
 * share of its payment-basis month), and payment-basis months marked (TAX_MONTHS_SOURCE) when a
 * day of them is recomputed, added up from their days' shares. A day is computed under the tenant's settings, so its fingerprint says
 * which. And what the summary reads through it: its days or month brought up to date first.
 */
import type { Db } from 'mongodb';
import { financialDocs } from '../db/collections.ts';
import { FINANCIAL_DOCS_SOURCE } from '../finance/financial-doc-days.ts';
import { financialDocHistoryDays, tenantsWithDocuments } from '../finance/financial-docs-repo.ts';
import { markedRollupKind } from '../rollups/marked-rollup-kind.ts';
import { getTracedSettings } from '../settings/settings-source.ts';
import { mxDateString, mxMonthRange } from '../time/mexico-city.ts';
import type { ReconcileSettings } from './reconcile.ts';
import { taxRollupFingerprint, TAX_ROLLUP_VERSION, type TaxDayRollup } from './tax-day-rollup.ts';
import { deleteTaxRollupsOf, readTaxDays } from './tax-rollups-repo.ts';
import { differingTaxDays, differingTaxMonths, keptTaxKeys, recomputeTaxDays, recomputeTaxMonths, TAX_MONTHS_SOURCE } from './refresh-tax-rollups.ts';

export const taxSummaryRollups = markedRollupKind<ReconcileSettings>({
  name: 'tax-summary',
  stateName: 'taxRollups',
  version: TAX_ROLLUP_VERSION,
  sources: [FINANCIAL_DOCS_SOURCE],
  grain: 'day',
  // A period has at most 366 days, so one pass brings any period up to date.
  marksPerPass: 400,
  // A run's days are computed each from its own day's documents (computeTaxDays): a rebuild's runs skip the days without any.
  rebuildAcrossGaps: true,
  tenants: tenantsWithDocuments,
  isEmpty: async (db) => !(await financialDocs(db).findOne({}, { projection: { _id: 1 } })),
  documentDays: async (db, tenant) => new Map([[FINANCIAL_DOCS_SOURCE, (await financialDocHistoryDays(db, tenant)).touched]]),
  keptUnits: async (db, tenant, maxTimeMS) => [
    ...(await keptTaxKeys(db, tenant, 'invoice', maxTimeMS)),
    ...(await keptTaxKeys(db, tenant, 'paymentDay', maxTimeMS)),
  ],
  deleteOf: deleteTaxRollupsOf,
  context: async (db, tenant) => (await getTracedSettings(db, tenant)).settings,
  recompute: recomputeTaxDays,
  differing: differingTaxDays,
  months: {
    source: TAX_MONTHS_SOURCE,
    // A month is added up from its days' shares: a few small reads each.
    runMonths: 1,
    recompute: recomputeTaxMonths,
    differing: differingTaxMonths,
    keptMonths: (db, tenant, maxTimeMS) => keptTaxKeys(db, tenant, 'payment', maxTimeMS),
  },
});

/**
 * A tenant's kept days in [fromDay, toDay], brought up to date first: days marked by a write
 * and days kept under other settings (or an older version) are recomputed from the documents.
 */
export async function readFreshTaxDays(
  db: Db,
  tenant: string,
  settings: ReconcileSettings,
  fromDay: string,
  toDay: string,
  maxTimeMS: number,
): Promise<TaxDayRollup[]> {
  if (toDay < fromDay) return [];
  await taxSummaryRollups.settle(db, tenant, { from: fromDay, to: toDay, maxPasses: 1, maxTimeMS, ctx: settings });
  const kept = await readTaxDays(db, tenant, 'invoice', fromDay, toDay, maxTimeMS);
  const fingerprint = taxRollupFingerprint(settings);
  const stale = kept.filter((k) => k.fingerprint !== fingerprint).map((k) => k.day);
  if (!stale.length) return kept;
  await taxSummaryRollups.recompute(db, tenant, stale, settings, maxTimeMS);
  return readTaxDays(db, tenant, 'invoice', fromDay, toDay, maxTimeMS);
}

/**
 * A tenant's payment-basis month, brought up to date first: its days' marks settled (which
 * marks the month), then the month recomputed if marked or kept under other settings. Null
 * when nothing counts in it.
 */
export async function readFreshTaxMonth(db: Db, tenant: string, settings: ReconcileSettings, month: string, maxTimeMS: number): Promise<TaxDayRollup | null> {
  const range = mxMonthRange(month);
  const first = mxDateString(range.start);
  const last = mxDateString(range.endExclusive - 1);
  await taxSummaryRollups.settle(db, tenant, { from: first, to: last, maxPasses: 1, maxTimeMS, ctx: settings });
  await taxSummaryRollups.settleMonths(db, tenant, { from: month, to: month, maxTimeMS, ctx: settings });
  const [kept] = await readTaxDays(db, tenant, 'payment', month, month, maxTimeMS);
  if (!kept || kept.fingerprint === taxRollupFingerprint(settings)) return kept ?? null;
  await recomputeTaxMonths(db, tenant, [month], settings, maxTimeMS);
  return (await readTaxDays(db, tenant, 'payment', month, month, maxTimeMS))[0] ?? null;
}
