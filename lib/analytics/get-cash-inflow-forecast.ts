/**
 * GET /api/analytics/cash-inflow-forecast (docs/domain.md "Cash inflow forecast",
 * "Customer concentration (HHI)"):
 *  - receivables as of asOf = min(now, end of endDate): invoices emitted by
 *    then, not cancelled by then, with an outstanding balance (Total − valid
 *    payments − valid credit notes dated by then) — of any age;
 *  - expected date = invoice date + client credit days + the client's median
 *    payment delay (payment day − due day) over the payment complements dated
 *    in the period and valid at asOf (a cancellation that took effect later does
 *    not count yet); portfolio median below 3 payments; 0 with no history;
 *  - DSO = receivables ÷ credit sales (Total of the invoices emitted in the
 *    period not cancelled by asOf) × days in the period;
 *  - HHI over revenue (SubTotal − Descuento of the invoices emitted in the
 *    period not cancelled by asOf, shortage deductions excluded: an indemnity
 *    is not a sale) per client. A cancellation that took effect after asOf
 *    does not count yet: the invoice was still revenue then.
 * Payment history and open invoices stream from their cursors: each history
 * row is folded into the payment delays (PaymentDelaysAccumulator), each open
 * invoice kept only as its balance and the fields the items show. When the receivables' kept
 * forms are built (docs/rollups.md "Receivables"), the open invoices come from the open-items
 * index and the payment delays and revenue from the kept days instead.
 */
import type { ServiceContext } from '../context.ts';
import { streamOpenInvoices, streamPaymentHistory, revenueByClient, type OpenInvoiceRow } from './receivables-repo.ts';
import { getTracedSettings, type SettingSource } from '../settings/settings-source.ts';
import type { TenantSettings } from '../model/tenant-settings.ts';
import { fromCents } from '../money/cents.ts';
import { resolvePeriod } from '../shared/period.ts';
import { mxDateString } from '../time/mexico-city.ts';
import {
  clientReceivables,
  dso,
  forecastInflows,
  forecastItemOf,
  openInvoiceOf,
  PaymentDelaysAccumulator,
  delayFor,
  type ClientReceivables,
  type DelayBasis,
  type ForecastClientRow,
  type ForecastItem,
  type OpenInvoice,
  type PaymentDelays,
} from './forecast.ts';
import { forecastOpenNow, minOffsetDays, type ForecastTerms } from './open-now.ts';
import { concentration, type ConcentrationBand } from './hhi.ts';
import { asOfInstant } from '../shared/as-of-day.ts';
import { asOfOut, capped, HHI_SOURCE, periodOut, type AsOfOut, type Capped, type PeriodOut } from './report.ts';
import { clientList, type ReportOptions } from '../shared/client-list.ts';
import type { Ratio } from './stats.ts';
import type { OpenReceivable } from './receivables-aging.ts';
import {
  keptFirstOpenNow,
  keptOpenSums,
  type OpenSums,
  type RankedOpen,
  keptPaymentDelays,
  keptRevenueByClient,
  readForecastDays,
  useKeptReceivables,
} from './kept-receivables.ts';

export const MIN_PAYMENTS_FOR_CLIENT_MEDIAN = 3;

export interface CashInflowInput {
  bucket: 'week' | 'month';
  limit: number;
  startDate?: string;
  endDate?: string;
  client?: string;
  /** The day receivables are taken at the end of (default: min(now, end of endDate)). */
  asOf?: string;
}

export interface ForecastItemOut {
  id: string;
  uuid: string;
  client: string;
  invoiceDate: string;
  outstanding: number;
  dueDate: string;
  expectedDate: string;
  delayDays: number;
  delayBasis: DelayBasis;
  pastDue: boolean;
  overdue: boolean;
}

export interface CashInflowForecast {
  tenant: string;
  computedAt: string;
  period: PeriodOut;
  asOf: AsOfOut;
  filters: { client: string | null };
  parameters: {
    bucket: 'week' | 'month';
    creditDays: { default: number; byClient: Record<string, number>; source: { default: SettingSource; byClient: SettingSource } };
    paymentDelay: {
      method: string;
      minPaymentsForClientMedian: number;
      historyFrom: string;
      historyTo: string;
      paymentsInHistory: number;
      portfolioMedianDays: number | null;
    };
    expectedAmount: string;
    revenueDefinition: string;
    hhiBands: TenantSettings['hhiBands'] & { source: string; settingsSource: SettingSource };
  };
  receivables: {
    openInvoices: number;
    outstanding: number;
    pastDue: { invoices: number; amount: number };
    notYetDue: { invoices: number; amount: number };
  };
  forecast: {
    bucket: 'week' | 'month';
    totalExpected: number;
    overdue: { expected: number; invoices: number; oldestExpectedDate: string | null };
    buckets: { key: string; start: string; end: string; expected: number; invoices: number }[];
  };
  clients: Capped<ForecastClientRow>;
  items: Capped<ForecastItemOut>;
  dso: Ratio & { accountsReceivable: number; creditSales: number; days: number };
  concentration: {
    hhi: number | null;
    band: ConcentrationBand | null;
    totalRevenue: number;
    clients: number;
    flaggedClients: number;
    explanation: string | null;
    shares: { client: string; revenue: number; sharePct: number | null; flagged: boolean }[];
  };
}

/** What an item shows of its invoice besides the balance. */
type OpenInvoiceDetail = Pick<OpenInvoiceRow, 'clientName' | 'date'> & { uuid: string };

/** The open invoices (balance > 0 by lib/finance) as they stream, each kept as its balance and its item's fields. */
async function openInvoices(rows: AsyncIterable<OpenInvoiceRow>): Promise<{ invoices: OpenInvoice[]; byId: Map<string, OpenInvoiceDetail> }> {
  const invoices: OpenInvoice[] = [];
  const byId = new Map<string, OpenInvoiceDetail>();
  for await (const row of rows) {
    const inv = openInvoiceOf(row);
    if (!inv) continue;
    byId.set(row.id, { clientName: row.clientName, date: row.date, uuid: row.invoice.uuid });
    invoices.push(inv);
  }
  return { invoices, byId };
}

/** What the answer says of the open invoices: per client, the forecast's buckets, the first items. */
interface OpenAnswer {
  receivables: ClientReceivables;
  forecast: CashInflowForecast['forecast'];
  items: Capped<ForecastItemOut>;
}

interface OpenTerms {
  limit: number;
  bucket: 'week' | 'month';
  asOf: number;
  terms: ForecastTerms;
  creditDays: (client: string) => number;
  delays: PaymentDelays;
}

/** The item of an open invoice expected on `expectedDate`. */
function itemOut(i: ForecastItem, detail: OpenInvoiceDetail | undefined, asOfDay: string): ForecastItemOut {
  return {
    id: i.id,
    uuid: detail?.uuid ?? '',
    client: i.client,
    invoiceDate: new Date(detail?.date ?? 0).toISOString(),
    outstanding: i.outstanding,
    dueDate: i.dueDate,
    expectedDate: i.expectedDate,
    delayDays: i.delayDays,
    delayBasis: i.delayBasis,
    pastDue: i.dueDate < asOfDay,
    overdue: i.overdue,
  };
}

/** Every open invoice at asOf folded one by one (the documents, or the open items of an as-of day in the past). */
function openItemsAnswer(open: { invoices: OpenInvoice[]; byId: Map<string, OpenInvoiceDetail> }, o: OpenTerms): OpenAnswer {
  const f = forecastInflows(open.invoices, o.creditDays, o.delays, o.asOf, o.bucket);
  const asOfDay = mxDateString(o.asOf);
  const items = f.items.map((i) => itemOut(i, open.byId.get(i.id), asOfDay));
  const receivables = clientReceivables(items, { ...o.terms, clientName: (id) => open.byId.get(id)?.clientName ?? '' }, o.delays);
  return {
    receivables,
    forecast: {
      bucket: f.bucket,
      totalExpected: f.totalExpected,
      overdue: { expected: f.overdue.expected, invoices: f.overdue.invoices, oldestExpectedDate: f.overdue.oldestExpectedDate },
      buckets: f.buckets.map((b) => ({ key: b.key, start: b.start, end: b.end, expected: b.expected, invoices: b.invoices })),
    },
    items: capped(items, o.limit),
  };
}

/**
 * From the sums per invoice day and client (kept-receivables.ts keptOpenSums): the figures, and
 * the items from the invoices that may be among the first `limit` (expected day, then id).
 */
async function openSumsAnswer(ctx: ServiceContext, tenant: string, open: OpenSums, o: OpenTerms & { only: string | undefined }): Promise<OpenAnswer> {
  const days = open.days;
  const sums = forecastOpenNow(days, o.only, o.terms, o.delays, o.asOf, o.bucket);
  const offset = (c: string): number => Math.round(o.creditDays(c)) + Math.round(delayFor(o.delays, c).delayDays);
  const asOfDay = mxDateString(o.asOf);
  const itemOf = (r: RankedOpen): ForecastItem | null =>
    forecastItemOf({ id: r.id, client: r.client, invoiceDate: r.invoiceDate, outstanding: r.outstanding }, o.creditDays, o.delays, asOfDay);
  const candidates = await keptFirstOpenNow(
    ctx.db,
    tenant,
    o.only,
    o.limit,
    minOffsetDays(days, o.only, offset),
    (r) => itemOf(r)?.expectedDate ?? null,
    open,
    ctx.config.queryTimeoutMs,
  );
  const listed = candidates
    .map((r) => ({ r, i: itemOf(r) }))
    .filter((x): x is { r: OpenReceivable; i: ForecastItem } => x.i !== null)
    .sort((a, b) => (a.i.expectedDate < b.i.expectedDate ? -1 : a.i.expectedDate > b.i.expectedDate ? 1 : a.i.id < b.i.id ? -1 : a.i.id > b.i.id ? 1 : 0))
    .slice(0, o.limit)
    .map(({ r, i }) => itemOut(i, { clientName: r.clientName, date: r.invoiceDate, uuid: r.uuid }, asOfDay));
  return {
    receivables: sums.receivables,
    forecast: {
      bucket: o.bucket,
      totalExpected: fromCents(sums.totalExpectedC),
      overdue: sums.overdue,
      buckets: sums.buckets,
    },
    items: { total: sums.openInvoices, listed: listed.length, limit: o.limit, data: listed },
  };
}

/**
 * `fromDocuments`: read the documents even when the receivables' forms are kept (the reference
 * implementation the differential test compares the kept answer with).
 */
export async function getCashInflowForecast(
  ctx: ServiceContext,
  tenant: string,
  input: CashInflowInput,
  opts: ReportOptions = {},
): Promise<CashInflowForecast> {
  const now = ctx.now();
  const period = resolvePeriod(now, input.startDate, input.endDate);
  const asOf = asOfInstant(now, input.asOf, period.asOf);
  const client = input.client;
  const timeout = ctx.config.queryTimeoutMs;
  const traced = getTracedSettings(ctx.db, tenant);
  const creditDaysOf =
    (settings: TenantSettings) =>
    (c: string): number =>
      settings.creditDaysByClient[c] ?? settings.defaultCreditDays;
  const asOfDay0 = mxDateString(asOf);
  const lastDay = period.endDate > asOfDay0 ? period.endDate : asOfDay0;
  const kept = await useKeptReceivables(ctx.db, tenant, lastDay, timeout, opts.fromDocuments);
  const keptDays = kept ? await readForecastDays(ctx.db, tenant, period.startDate, lastDay, timeout) : [];
  const only = client || undefined;
  const [{ settings, sourceOf }, { delays, payments }, open, revenue] = await Promise.all([
    traced,
    // Payment delays from the complements dated in the period valid at asOf (validity judged in the pipeline, as lib/finance/cancellation.ts
    // does, with the cancellations in effect by asOf only: one that took effect later does not count yet, as for the open invoices).
    // Every client's, even with a client filter: a client with fewer than 3 payments takes the portfolio median, the
    // tenant's, so its invoices are expected on the same day whether the answer is filtered or not.
    traced.then(async ({ settings: s }) => {
      const acc = new PaymentDelaysAccumulator(MIN_PAYMENTS_FOR_CLIENT_MEDIAN);
      const creditDays = creditDaysOf(s);
      if (kept) await keptPaymentDelays(ctx.db, tenant, keptDays, { startDate: period.startDate, asOf }, creditDays, acc, timeout);
      else for await (const row of streamPaymentHistory(ctx.db, tenant, { from: period.start, to: asOf }, timeout)) acc.addInvoice(row, creditDays);
      return { delays: acc.result(), payments: acc.payments };
    }),
    (async (): Promise<{ sums: OpenSums } | { invoices: OpenInvoice[]; byId: Map<string, OpenInvoiceDetail> }> => {
      if (!kept) return openInvoices(streamOpenInvoices(ctx.db, tenant, { asOf, ...(client ? { client } : {}) }, timeout));
      return { sums: await keptOpenSums(ctx.db, tenant, asOf, only, timeout) };
    })(),
    // Revenue (credit sales and concentration) of the invoices emitted in the period, cancelled or not as of asOf: one whose
    // cancellation took effect later was still revenue then.
    kept
      ? keptRevenueByClient(keptDays, { startDate: period.startDate, endDate: period.endDate, asOf, ...(only ? { client: only } : {}) })
      : revenueByClient(ctx.db, tenant, { start: period.start, end: period.end, asOf, ...(client ? { client } : {}) }, timeout),
  ]);
  const creditDays = creditDaysOf(settings);
  const asOfDay = mxDateString(asOf);
  const terms = { creditDaysDefault: settings.defaultCreditDays, creditDaysByClient: settings.creditDaysByClient };
  const { receivables, forecast, items } =
    'sums' in open
      ? await openSumsAnswer(ctx, tenant, open.sums, { only, limit: input.limit, bucket: input.bucket, asOf, terms, creditDays, delays })
      : openItemsAnswer(open, { limit: input.limit, bucket: input.bucket, asOf, terms, creditDays, delays });
  const totalExpected = forecast.totalExpected;

  const valid = revenue.filter((r) => !r.cancelled);
  const creditSales = fromCents(valid.reduce((s, r) => s + r.totalC, 0));
  const conc = concentration(
    valid.map((r) => ({ client: r.client, revenue: fromCents(r.revenueC) })),
    settings.hhiBands,
  );

  return {
    tenant,
    computedAt: now.toISOString(),
    period: periodOut(period),
    asOf: asOfOut(asOf),
    filters: { client: client ?? null },
    parameters: {
      bucket: input.bucket,
      creditDays: {
        default: settings.defaultCreditDays,
        byClient: { ...settings.creditDaysByClient },
        source: { default: sourceOf('defaultCreditDays'), byClient: sourceOf('creditDaysByClient') },
      },
      paymentDelay: {
        method: `Median of (payment day − due day) over the valid payment complements of PPD invoices dated ${period.startDate}..${asOfDay}; the portfolio median for a client with fewer than ${MIN_PAYMENTS_FOR_CLIENT_MEDIAN}; 0 with no history at all. x.5 days round up.`,
        minPaymentsForClientMedian: MIN_PAYMENTS_FOR_CLIENT_MEDIAN,
        historyFrom: period.startDate,
        historyTo: asOfDay,
        paymentsInHistory: payments,
        portfolioMedianDays: delays.portfolioMedianDays,
      },
      expectedAmount: 'Outstanding balance as of asOf: Total (already net of the 4% retention) − valid payments − valid credit notes.',
      revenueDefinition:
        'SubTotal − Descuento − shortage deductions (iFalt: an indemnity is not a sale or service), before taxes, of the invoices emitted in the period not cancelled by asOf.',
      hhiBands: { ...settings.hhiBands, source: HHI_SOURCE, settingsSource: sourceOf('hhiBands') },
    },
    receivables: {
      openInvoices: items.total,
      outstanding: receivables.outstanding,
      pastDue: receivables.pastDue,
      notYetDue: receivables.notYetDue,
    },
    forecast,
    clients: clientList(receivables.clients, input.limit, opts),
    items,
    dso: { ...dso(totalExpected, creditSales, period.days), accountsReceivable: totalExpected, creditSales, days: period.days },
    concentration: {
      hhi: conc.hhi,
      band: conc.band,
      totalRevenue: conc.totalRevenue,
      clients: conc.clients,
      flaggedClients: conc.shares.filter((s) => s.flagged).length,
      explanation: conc.explanation ?? null,
      shares: clientList(conc.shares, input.limit, opts).data,
    },
  };
}
