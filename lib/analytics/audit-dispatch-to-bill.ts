/**
 * GET /api/analytics/dispatch-to-bill (domain.md "Dispatch-to-bill"): for the
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
 */
import type { ServiceContext } from '../context.ts';
import { findDeliveryRows } from '../db/fleet-repo.ts';
import type { TripDocument } from '../model/trip-document.ts';
import { fromCents } from '../money/cents.ts';
import { resolvePeriod } from '../shared/period.ts';
import { MS_PER_DAY } from '../time/mexico-city.ts';
import { dispatchToBill, tripOffloadDate, type DispatchToBillRow, type DispatchToBillSummary } from './dispatch-to-bill.ts';
import { asOfOut, capped, periodOut, type AsOfOut, type Capped, type PeriodOut } from './report.ts';
import { roundTo } from './stats.ts';

export interface DispatchToBillInput {
  limit: number;
  startDate?: string;
  endDate?: string;
  client?: string;
}

export type SummaryOut = Omit<DispatchToBillSummary, 'reason'> & { reason: string | null };

export interface UnbilledTrip {
  tripId: string;
  client: string;
  offloadDate: string;
  daysSinceOffload: number;
  value: number;
  reason: 'no invoice linked' | 'linked invoice cancelled';
  idFinan: string | null;
}

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
  byClient: (SummaryOut & { client: string })[];
  unbilledTrips: Capped<UnbilledTrip>;
  preBilledTrips: Capped<{ tripId: string; client: string; lagDays: number }>;
}

const out = (s: DispatchToBillSummary): SummaryOut => {
  const { reason, ...rest } = s;
  return { ...rest, reason: reason ?? null };
};

export async function auditDispatchToBill(ctx: ServiceContext, tenant: string, input: DispatchToBillInput): Promise<DispatchToBillReport> {
  const now = ctx.now();
  const period = resolvePeriod(now, input.startDate, input.endDate);
  const timeout = ctx.config.queryTimeoutMs;
  const trips = await findDeliveryRows(ctx.db, tenant, { start: period.start, end: period.end, ...(input.client ? { client: input.client } : {}) }, timeout);

  const rows: DispatchToBillRow[] = [];
  const unbilled: UnbilledTrip[] = [];
  let noLink = 0;
  let cancelledLink = 0;
  let unresolved = 0;
  let unresolvedC = 0;
  for (const trip of trips) {
    // tripOffloadDate reads only the legs' unloadDate, which the compact rows carry.
    const offload = tripOffloadDate({ shipments: trip.legs } as unknown as Pick<TripDocument, 'shipments'>);
    const valueC = trip.legs.reduce((s, l) => s + l.totalFreightC, 0);
    const value = fromCents(valueC);
    const base = { tripId: String(trip._id), client: trip.client, value };
    if (offload === null) {
      rows.push({ ...base, offloadDate: null, invoiceDate: null });
      continue;
    }
    if (offload < period.start || offload > period.end) continue; // delivered after the period
    const link = trip.inv[0];
    if (trip.idFinan && !link) {
      unresolved += 1;
      unresolvedC += valueC;
      continue;
    }
    if (!link || link.cancelled) {
      if (link) cancelledLink += 1;
      else noLink += 1;
      rows.push({ ...base, offloadDate: offload, invoiceDate: null });
      unbilled.push({
        tripId: base.tripId,
        client: trip.client,
        offloadDate: new Date(offload).toISOString(),
        daysSinceOffload: roundTo((now.getTime() - offload) / MS_PER_DAY, 2),
        value,
        reason: link ? 'linked invoice cancelled' : 'no invoice linked',
        idFinan: trip.idFinan ?? null,
      });
      continue;
    }
    rows.push({ ...base, offloadDate: offload, invoiceDate: link.date });
  }

  const { lags, summary } = dispatchToBill(rows);
  const byClientRows = new Map<string, DispatchToBillRow[]>();
  for (const r of rows) {
    const list = byClientRows.get(r.client ?? '');
    if (list) list.push(r);
    else byClientRows.set(r.client ?? '', [r]);
  }
  unbilled.sort((a, b) => (a.offloadDate < b.offloadDate ? -1 : a.offloadDate > b.offloadDate ? 1 : a.tripId < b.tripId ? -1 : 1));
  const preBilled = lags.filter((l) => l.preBilled).sort((a, b) => a.lagDays - b.lagDays || (a.tripId < b.tripId ? -1 : 1));

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
      tripSelection: 'Trips with a leg offloaded in the period; delivered in the period when the last leg is; a trip with a leg still in transit counts as not delivered.',
    },
    summary: { ...out(summary), unbilledNoLink: noLink, unbilledCancelledLink: cancelledLink, unresolvedLinks: { count: unresolved, value: fromCents(unresolvedC) } },
    byClient: [...byClientRows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([c, list]) => ({ client: c, ...out(dispatchToBill(list).summary) })),
    unbilledTrips: capped(unbilled, input.limit),
    preBilledTrips: capped(preBilled.map((l) => ({ tripId: l.tripId, client: l.client ?? '', lagDays: l.lagDays })), input.limit),
  };
}
