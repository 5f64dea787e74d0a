/**
 * GET /api/analytics/discounts-and-shrinkage (docs/domain.md "Discounts, demurrage
 * and shrinkage recovery"):
 *  - discounts: Σ Descuento ÷ Σ gross freight (freight concept amounts before
 *    discount) per client and month, non-cancelled invoices emitted in the
 *    period (summed in the database in integer cents);
 *  - demurrage (estadías) and handling (maniobras) billed per client, same invoices;
 *  - shrinkage: legs of the trips delivered in the period (every leg
 *    delivered, the last delivery in it; a leg in transit is no loss), each through legShrinkage with the tenant's tolerance rules, price
 *    per litre and recovery mode: out-of-tolerance legs, litres and the
 *    recoverable value, versus what was recovered = the shortage concepts on
 *    the (non-cancelled) invoices linked to those trips. The trips stream
 *    from the cursor into ShrinkageRecoveryAccumulator one at a time. An invoice
 *    linked by several trips goes to the one with the smallest id among all the
 *    period's trips; a filter by client keeps what is credited to that client
 *    (its figures are its row of the unfiltered answer).
 * When the store holds them, both read the days kept on write instead (docs/rollups.md).
 */
import type { ServiceContext } from '../context.ts';
import { conceptSumsByClientMonth, type ClientMonthConceptRow } from './billing-concepts-repo.ts';
import { streamShrinkageRows } from './trip-audits-repo.ts';
import { getTracedSettings, type SettingSource } from '../settings/settings-source.ts';
import type { TenantSettings, ToleranceRule } from '../model/tenant-settings.ts';
import { resolvePeriod } from '../shared/period.ts';
import { discountsAndDemurrage, type DiscountsAndDemurrage } from './discounts.ts';
import { foldRows, periodOut, type Capped, type PeriodOut } from './report.ts';
import { clientList, largestFirst, type ReportOptions } from '../shared/client-list.ts';
import { ShrinkageRecoveryAccumulator, worstFirst, type ShrinkageRecovery, type WorstLeg } from './shrinkage-recovery.ts';
import { discountsShrinkageRollupsReady, readFreshDiscountsShrinkage } from './refresh-discounts-shrinkage-rollups.ts';
import { readFindings, readWorstFindings } from './discounts-shrinkage-rollups-repo.ts';
import { foldDiscountDays } from './discount-days.ts';
import { foldShrinkageDays } from './shrinkage-days.ts';

export interface DiscountsShrinkageInput {
  limit: number;
  startDate?: string;
  endDate?: string;
  client?: string;
}

export interface DiscountsAndShrinkage {
  tenant: string;
  computedAt: string;
  period: PeriodOut;
  filters: { client: string | null };
  parameters: {
    shrinkage: {
      defaultTolerancePct: number;
      toleranceRules: ToleranceRule[];
      recoveryMode: TenantSettings['shrinkageRecoveryMode'];
      pricePerLitre: Record<string, number>;
      toleranceBasis: string;
      settingsSource: { tolerance: SettingSource; toleranceRules: SettingSource; recoveryMode: SettingSource; pricePerLitre: SettingSource };
    };
    discountRate: string;
    invoiceSelection: string;
    tripSelection: string;
    recovered: string;
  };
  discounts: {
    totals: DiscountsAndDemurrage['discounts']['totals'];
    byClient: Capped<DiscountsAndDemurrage['discounts']['byClient'][number]>;
    byClientMonth: Capped<DiscountsAndDemurrage['discounts']['byClientMonth'][number]>;
  };
  demurrage: { totals: DiscountsAndDemurrage['demurrage']['totals']; byClient: Capped<DiscountsAndDemurrage['demurrage']['byClient'][number]> };
  shrinkage: Omit<ShrinkageRecovery, 'worstLegs' | 'byClient'> & { byClient: Capped<ShrinkageRecovery['byClient'][number]>; worstLegs: Capped<WorstLeg> };
}

/** Legs beyond tolerance in a period up to which all are read and sorted here; above, the first `limit` are read in index order. */
const FINDINGS_SORTED_IN_MEMORY = 2000;

/** The shrinkage part as computed, before its per-client list is capped. */
type ShrinkageOut = Omit<ShrinkageRecovery, 'worstLegs'> & { worstLegs: Capped<WorstLeg> };

/**
 * The period's figures from the days kept on write (docs/rollups.md "Discounts and shrinkage"):
 * the discount days' groups per client and month, the delivery days' sums and recovering
 * invoices, and the period's legs beyond tolerance from the findings index.
 */
async function fromKept(
  ctx: ServiceContext,
  tenant: string,
  period: { startDate: string; endDate: string },
  client: string | undefined,
  limit: number,
  settings: TenantSettings,
): Promise<[ClientMonthConceptRow[], ShrinkageOut]> {
  const timeout = ctx.config.queryTimeoutMs;
  const { discountDays, shrinkageDays } = await readFreshDiscountsShrinkage(ctx.db, tenant, period.startDate, period.endDate, settings, timeout);
  const { outOfTolerance, ...sums } = foldShrinkageDays(shrinkageDays, client);
  const found =
    outOfTolerance <= FINDINGS_SORTED_IN_MEMORY
      ? (await readFindings(ctx.db, tenant, period.startDate, period.endDate, client, timeout))
          .map((f) => f.leg)
          .sort(worstFirst)
          .slice(0, limit)
      : (await readWorstFindings(ctx.db, tenant, period.startDate, period.endDate, client, limit, timeout)).map((f) => f.leg);
  return [foldDiscountDays(discountDays, client), { ...sums, worstLegs: { total: outOfTolerance, listed: found.length, limit, data: found } }];
}

/**
 * Reads the days kept on write when the store holds them; `fromDocuments` reads every invoice
 * and trip of the period instead (the reference the kept days are checked against).
 */
export async function auditDiscountsAndShrinkage(
  ctx: ServiceContext,
  tenant: string,
  input: DiscountsShrinkageInput,
  opts: ReportOptions = {},
): Promise<DiscountsAndShrinkage> {
  const now = ctx.now();
  const period = resolvePeriod(now, input.startDate, input.endDate);
  const client = input.client;
  const timeout = ctx.config.queryTimeoutMs;
  const scope = { start: period.start, end: period.end, ...(client ? { client } : {}) };
  // Every trip of the period, whatever the client: an invoice's recovery goes to the linking trip
  // with the smallest id among all of them; the accumulator then counts the client's trips only.
  const tripScope = { start: period.start, end: period.end };
  const [{ settings, sourceOf }, kept] = await Promise.all([
    getTracedSettings(ctx.db, tenant),
    opts.fromDocuments ? Promise.resolve(false) : discountsShrinkageRollupsReady(ctx.db),
  ]);
  const [conceptRows, shrinkage] = kept
    ? await fromKept(ctx, tenant, period, client || undefined, input.limit, settings)
    : await Promise.all([
        conceptSumsByClientMonth(ctx.db, tenant, scope, timeout),
        foldRows(streamShrinkageRows(ctx.db, tenant, tripScope, timeout), new ShrinkageRecoveryAccumulator(settings, period, input.limit, client || undefined)),
      ]);

  const { discounts, demurrage } = discountsAndDemurrage(conceptRows);
  const cap = <T>(items: readonly T[]): Capped<T> => clientList(items, input.limit, opts);
  const discountClients = cap([...discounts.byClient].sort(largestFirst((c) => c.grossFreight)));
  const listed = new Map(discountClients.data.map((c, i) => [c.client, i]));
  const clientMonths = discounts.byClientMonth.filter((r) => listed.has(r.client));
  clientMonths.sort((a, b) => listed.get(a.client)! - listed.get(b.client)! || (a.month < b.month ? -1 : a.month > b.month ? 1 : 0));

  return {
    tenant,
    computedAt: now.toISOString(),
    period: periodOut(period),
    filters: { client: client ?? null },
    parameters: {
      shrinkage: {
        defaultTolerancePct: settings.shrinkageTolerancePct,
        toleranceRules: settings.toleranceRules,
        recoveryMode: settings.shrinkageRecoveryMode,
        pricePerLitre: settings.pricePerLitre,
        toleranceBasis:
          'Percent of loaded litres; most specific rule wins (client+product, client, product, tenant default); a multi-product leg uses the loaded-weighted mean. A leg exceeds its tolerance when shrinkage % > tolerance (strictly).',
        settingsSource: {
          tolerance: sourceOf('shrinkageTolerancePct'),
          toleranceRules: sourceOf('toleranceRules'),
          recoveryMode: sourceOf('shrinkageRecoveryMode'),
          pricePerLitre: sourceOf('pricePerLitre'),
        },
      },
      discountRate: 'Σ Descuento ÷ Σ gross freight (freight concept amounts before discount) × 100.',
      invoiceSelection: 'Non-cancelled invoices emitted in the period (Mexico City days).',
      tripSelection:
        'Trips delivered in the period: every leg delivered (offloaded volumes known), the last delivery in the period; every leg of such a trip counts. A trip with a leg in transit has no shrinkage yet and is not counted.',
      recovered: 'Shortage concepts (ObjetoImp 01) on the non-cancelled invoices linked (idFinan) to those trips; litres = concept quantity.',
    },
    discounts: {
      totals: discounts.totals,
      byClient: discountClients,
      // The months of the clients listed: its limit is theirs (every client in an export).
      byClientMonth: { total: discounts.byClientMonth.length, listed: clientMonths.length, limit: discountClients.limit, data: clientMonths },
    },
    demurrage: { totals: demurrage.totals, byClient: cap([...demurrage.byClient].sort(largestFirst((c) => c.demurrage + c.handling))) },
    shrinkage: {
      ...shrinkage,
      byClient: cap(
        [...shrinkage.byClient].sort(
          largestFirst(
            (c) => c.recoverableValue,
            (c) => c.shrinkageLitres,
          ),
        ),
      ),
    },
  };
}
