/**
 * GET /api/analytics/dispatch-to-bill (docs/domain.md "Dispatch-to-bill"): for the
 * trips delivered in the period (last leg offloaded in it), lag = invoice
 * instant − delivery instant in elapsed days, sign kept (≤ 0 = pre-billed,
 * issued at dispatch); median, p90, share billed within 1/3/7 days; delivered
 * trips with no valid invoice = revenue leakage (count and freight value).
 * Billing state is the current one (computedAt): an invoice issued after the
 * period still bills its trip.
 *
 * Link states: no idFinan → unbilled; idFinan to a cancelled invoice →
 * unbilled; idFinan to a document this tenant does not have (legacy id) →
 * unresolved, kept out of both the lags and the leakage and counted apart.
 * Reads the days kept on write (docs/rollups.md "Dispatch-to-bill") when the store holds them;
 * `fromDocuments` streams the period's trips from the cursor into DispatchToBillAccumulator
 * instead (the reference the kept days are checked against).
 */
import type { ServiceContext } from '../context.ts';
import { streamDeliveryRows } from './trip-audits-repo.ts';
import { resolvePeriod } from '../shared/period.ts';
import { DispatchToBillAccumulator, type DispatchToBillResult, type DispatchToBillSummary, type UnbilledTrip } from './dispatch-to-bill.ts';
import { asOfOut, foldRows, periodOut, type AsOfOut, type Capped, type PeriodOut } from './report.ts';
import { clientList, largestFirst, type ReportOptions } from '../shared/client-list.ts';
import { dispatchToBillRollups } from './dispatch-to-bill-rollup-kind.ts';
import { keptDispatchToBill } from './kept-dispatch-to-bill.ts';

export interface DispatchToBillInput {
  limit: number;
  startDate?: string;
  endDate?: string;
  client?: string;
}

export type SummaryOut = Omit<DispatchToBillSummary, 'reason'> & { reason: string | null };

export interface DispatchToBillReport {
  tenant: string;
  computedAt: string;
  period: PeriodOut;
  asOf: AsOfOut;
  filters: { client: string | null };
  parameters: { lag: string; percentileMethod: string; withinDays: number[]; value: string; tripSelection: string };
  summary: SummaryOut & {
    unbilledNoLink: number;
    unbilledCancelledLink: number;
    unresolvedLinks: { count: number; value: number };
  };
  byClient: Capped<SummaryOut & { client: string }>;
  unbilledTrips: Capped<UnbilledTrip>;
  preBilledTrips: Capped<{ tripId: string; client: string; lagDays: number }>;
}

const out = (s: DispatchToBillSummary): SummaryOut => {
  const { reason, ...rest } = s;
  return { ...rest, reason: reason ?? null };
};

export async function auditDispatchToBill(
  ctx: ServiceContext,
  tenant: string,
  input: DispatchToBillInput,
  opts: ReportOptions = {},
): Promise<DispatchToBillReport> {
  const now = ctx.now();
  const period = resolvePeriod(now, input.startDate, input.endDate);
  const timeout = ctx.config.queryTimeoutMs;
  const scope = input.client ? { client: input.client } : {};
  const kept = !opts.fromDocuments && (await dispatchToBillRollups.ready(ctx.db));
  const result: DispatchToBillResult = kept
    ? await keptDispatchToBill(ctx.db, tenant, period, scope, input.limit, now.getTime(), timeout)
    : await foldRows(
        streamDeliveryRows(ctx.db, tenant, { start: period.start, end: period.end, ...scope }, timeout),
        new DispatchToBillAccumulator(period, now.getTime(), input.limit),
      );
  const { summary, byClient, unbilled, preBilled, noLink, cancelledLink, unresolved } = result;

  return {
    tenant,
    computedAt: now.toISOString(),
    period: periodOut(period),
    asOf: asOfOut(now.getTime()),
    filters: { client: input.client ?? null },
    parameters: {
      lag: 'Invoice emission instant − delivery instant (last leg offload), in elapsed days (2 decimals), sign kept; lag ≤ 0 is pre-billed (invoiced at dispatch).',
      percentileMethod: 'linear interpolation between closest ranks (Hyndman–Fan type 7, Excel PERCENTILE.INC)',
      withinDays: [1, 3, 7],
      value: 'Σ legs totalFreight (freight plus tolls), the amount the trip would invoice.',
      tripSelection:
        'Trips with a leg delivered in the period; delivered in the period when the last leg is; a trip with a leg still in transit (offloaded volumes not recorded) counts as not delivered.',
    },
    summary: { ...out(summary), unbilledNoLink: noLink, unbilledCancelledLink: cancelledLink, unresolvedLinks: unresolved },
    byClient: clientList(byClient.map((c) => ({ client: c.client, ...out(c.summary) })).sort(largestFirst((c) => c.deliveredTrips)), input.limit, opts),
    unbilledTrips: unbilled,
    preBilledTrips: { ...preBilled, data: preBilled.data.map((l) => ({ tripId: l.tripId, client: l.client ?? '', lagDays: l.lagDays })) },
  };
}
