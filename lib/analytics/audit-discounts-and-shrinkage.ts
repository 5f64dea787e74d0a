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
 *    from the cursor into ShrinkageRecoveryAccumulator one at a time.
 */
import type { ServiceContext } from '../context.ts';
import { conceptSumsByClientMonth } from './billing-concepts-repo.ts';
import { streamShrinkageRows } from './trip-audits-repo.ts';
import { getTracedSettings, type SettingSource } from '../settings/settings-source.ts';
import type { TenantSettings, ToleranceRule } from '../model/tenant-settings.ts';
import { resolvePeriod } from '../shared/period.ts';
import { discountsAndDemurrage, type DiscountsAndDemurrage } from './discounts.ts';
import { foldRows, periodOut, type Capped, type PeriodOut } from './report.ts';
import { ShrinkageRecoveryAccumulator, type ShrinkageRecovery, type WorstLeg } from './shrinkage-recovery.ts';

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
  discounts: DiscountsAndDemurrage['discounts'];
  demurrage: DiscountsAndDemurrage['demurrage'];
  shrinkage: Omit<ShrinkageRecovery, 'worstLegs'> & { worstLegs: Capped<WorstLeg> };
}

export async function auditDiscountsAndShrinkage(ctx: ServiceContext, tenant: string, input: DiscountsShrinkageInput): Promise<DiscountsAndShrinkage> {
  const now = ctx.now();
  const period = resolvePeriod(now, input.startDate, input.endDate);
  const client = input.client;
  const timeout = ctx.config.queryTimeoutMs;
  const scope = { start: period.start, end: period.end, ...(client ? { client } : {}) };
  const traced = getTracedSettings(ctx.db, tenant);
  const [{ settings, sourceOf }, conceptRows, shrinkage] = await Promise.all([
    traced,
    conceptSumsByClientMonth(ctx.db, tenant, scope, timeout),
    traced.then(({ settings: s }) => foldRows(streamShrinkageRows(ctx.db, tenant, scope, timeout), new ShrinkageRecoveryAccumulator(s, period, input.limit))),
  ]);

  const { discounts, demurrage } = discountsAndDemurrage(conceptRows);

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
    discounts,
    demurrage,
    shrinkage,
  };
}
