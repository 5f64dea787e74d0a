/**
 * Cash inflow forecast (docs/domain.md "Cash inflow forecast"): each open invoice is
 * expected on due date (invoice date + client credit days) + the client's
 * historical median payment delay; amounts are bucketed by week or month.
 * Dates are Mexico City calendar days; delays are whole calendar days.
 */
import { documentBalance, type BalanceInput } from '../finance/balance.ts';
import { daysBetweenDates, isoWeekday, mxAddDays, mxDateString, mxDayStart } from '../time/mexico-city.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { rateOf, toMxn } from '../money/currency.ts';
import { median, ratio, type Ratio } from './stats.ts';

export interface PastPayment {
  client: string;
  /** Due instant (invoice date + credit days), epoch ms. */
  dueDate: number;
  /** Payment instant, epoch ms. */
  paidDate: number;
}

export type DelayBasis = 'client' | 'portfolio' | 'none';

export interface PaymentDelays {
  /** client → median delay in days: its own median with ≥ minPayments payments, else the portfolio median. */
  byClient: Map<string, number>;
  basis: Map<string, 'client' | 'portfolio'>;
  paymentsByClient: Map<string, number>;
  /** Median over every past payment; the fallback for clients with no history too. Null with no history at all. */
  portfolioMedianDays: number | null;
}

/**
 * Payment delays folded one payment at a time (delay = paid day − due day,
 * Mexico City calendar days; negative = paid early): keeps one number per
 * payment, per client and overall, for the medians.
 */
export class PaymentDelaysAccumulator {
  private readonly perClient = new Map<string, number[]>();
  private readonly all: number[] = [];
  /** Payments seen (valid instants or not). */
  payments = 0;

  constructor(private readonly minPayments = 3) {}

  add(p: PastPayment): void {
    this.payments += 1;
    if (!Number.isFinite(p.dueDate) || !Number.isFinite(p.paidDate)) return;
    const d = daysBetweenDates(mxDateString(p.dueDate), mxDateString(p.paidDate));
    this.all.push(d);
    const list = this.perClient.get(p.client);
    if (list) list.push(d);
    else this.perClient.set(p.client, [d]);
  }

  /** `count` payments of a client, each `delayDays` days past due (a bar of a kept histogram: lib/analytics/receivables-day.ts). */
  addDelays(client: string, delayDays: number, count: number): void {
    this.payments += count;
    let list = this.perClient.get(client);
    if (!list) this.perClient.set(client, (list = []));
    for (let i = 0; i < count; i++) {
      this.all.push(delayDays);
      list.push(delayDays);
    }
  }

  /** Every valid complement of an invoice (pastPayments, one row). */
  addInvoice(row: PaidInvoice, creditDays: (client: string) => number): void {
    const due = dueInstant(row.date, creditDays(row.client));
    for (const paidAt of row.paid) this.add({ client: row.client, dueDate: due, paidDate: paidAt });
  }

  result(): PaymentDelays {
    const portfolio = median(this.all);
    const byClient = new Map<string, number>();
    const basis = new Map<string, 'client' | 'portfolio'>();
    const paymentsByClient = new Map<string, number>();
    for (const [client, delays] of this.perClient) {
      paymentsByClient.set(client, delays.length);
      const own = median(delays);
      if (delays.length >= this.minPayments && own !== null) {
        byClient.set(client, own);
        basis.set(client, 'client');
      } else if (portfolio !== null) {
        byClient.set(client, portfolio);
        basis.set(client, 'portfolio');
      }
    }
    return { byClient, basis, paymentsByClient, portfolioMedianDays: portfolio };
  }
}

/** Delay = paid day − due day (Mexico City calendar days; negative = paid early). */
export function clientPaymentDelays(pastPayments: Iterable<PastPayment>, minPayments = 3): PaymentDelays {
  const acc = new PaymentDelaysAccumulator(minPayments);
  for (const p of pastPayments) acc.add(p);
  return acc.result();
}

/** Delay to apply to a client: its entry, else the portfolio median, else 0 (no history anywhere). */
export function delayFor(delays: PaymentDelays, client: string): { delayDays: number; basis: DelayBasis } {
  const own = delays.byClient.get(client);
  if (own !== undefined) return { delayDays: own, basis: delays.basis.get(client) ?? 'client' };
  if (delays.portfolioMedianDays !== null) return { delayDays: delays.portfolioMedianDays, basis: 'portfolio' };
  return { delayDays: 0, basis: 'none' };
}

export interface OpenInvoice {
  id: string;
  client: string;
  /** Invoice instant, epoch ms. */
  invoiceDate: number;
  /** Outstanding balance (net of retention: the Total is what the client pays). */
  outstanding: number;
}

export interface ForecastItem {
  id: string;
  client: string;
  outstanding: number;
  dueDate: string;
  expectedDate: string;
  delayDays: number;
  delayBasis: DelayBasis;
  overdue: boolean;
}

export interface ForecastBucket {
  /** 'YYYY-MM' for months, the bucket's first day for weeks. */
  key: string;
  /** Inclusive Mexico City dates. The first bucket starts at asOf, not at the period start. */
  start: string;
  end: string;
  expected: number;
  invoices: number;
  invoiceIds: string[];
}

export interface InflowForecast {
  asOf: string;
  bucket: 'week' | 'month';
  /** Expected before asOf's day: kept apart so aging stays visible instead of inflating the first bucket. */
  overdue: { expected: number; invoices: number; invoiceIds: string[]; oldestExpectedDate: string | null };
  buckets: ForecastBucket[];
  totalExpected: number;
  items: ForecastItem[];
}

/** The last day of the bucket starting on `start`: its Sunday (ISO weeks) or the month's last day. */
export function bucketEnd(start: string, bucket: 'week' | 'month'): string {
  if (bucket === 'week') return mxAddDays(start, 7 - isoWeekday(start)); // through Sunday (ISO weeks)
  const [y, m] = start.split('-').map(Number) as [number, number];
  const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return `${start.slice(0, 8)}${String(last).padStart(2, '0')}`;
}

/** An open invoice's item: due on its day + the client's credit days, expected its median delay later; null when it owes less than a cent. */
export function forecastItemOf(inv: OpenInvoice, creditDays: (client: string) => number, delays: PaymentDelays, asOfDay: string): ForecastItem | null {
  if (toCents(inv.outstanding) <= 0) return null;
  const dueDate = mxAddDays(mxDateString(inv.invoiceDate), Math.round(creditDays(inv.client)));
  const { delayDays, basis } = delayFor(delays, inv.client);
  const expectedDate = mxAddDays(dueDate, Math.round(delayDays) + 0);
  return {
    id: inv.id,
    client: inv.client,
    outstanding: fromCents(toCents(inv.outstanding)),
    dueDate,
    expectedDate,
    delayDays,
    delayBasis: basis,
    overdue: expectedDate < asOfDay,
  };
}

/**
 * Open invoices (outstanding > 0; the caller excludes cancelled ones) bucketed
 * by expected date. Buckets are calendar weeks (Mon–Sun) or months, contiguous
 * from asOf's day to the last expected date; the first is clipped to start at
 * asOf. A median delay of x.5 days rounds up (later date, the prudent side).
 */
export function forecastInflows(
  openInvoices: readonly OpenInvoice[],
  creditDays: (client: string) => number,
  delays: PaymentDelays,
  asOf: number,
  bucket: 'week' | 'month',
): InflowForecast {
  const asOfDay = mxDateString(asOf);
  const items: ForecastItem[] = [];
  for (const inv of openInvoices) {
    const item = forecastItemOf(inv, creditDays, delays, asOfDay);
    if (item) items.push(item);
  }
  items.sort((a, b) => (a.expectedDate < b.expectedDate ? -1 : a.expectedDate > b.expectedDate ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

  const overdueItems = items.filter((i) => i.overdue);
  const future = items.filter((i) => !i.overdue);
  const lastDay = future.length > 0 ? (future[future.length - 1]?.expectedDate ?? asOfDay) : asOfDay;

  const buckets: ForecastBucket[] = [];
  let start = asOfDay;
  while (start <= lastDay) {
    const end = bucketEnd(start, bucket);
    const inside = future.filter((i) => i.expectedDate >= start && i.expectedDate <= end);
    buckets.push({
      key: bucket === 'month' ? start.slice(0, 7) : start,
      start,
      end,
      expected: fromCents(inside.reduce((s, i) => s + toCents(i.outstanding), 0)),
      invoices: inside.length,
      invoiceIds: inside.map((i) => i.id),
    });
    start = mxAddDays(end, 1);
  }
  const sum = (list: ForecastItem[]): number => fromCents(list.reduce((s, i) => s + toCents(i.outstanding), 0));
  return {
    asOf: asOfDay,
    bucket,
    overdue: {
      expected: sum(overdueItems),
      invoices: overdueItems.length,
      invoiceIds: overdueItems.map((i) => i.id),
      oldestExpectedDate: overdueItems[0]?.expectedDate ?? null,
    },
    buckets,
    totalExpected: sum(items),
    items,
  };
}

/** Days sales outstanding = AR ÷ credit sales × days in the period (2 decimals); null when there were no credit sales. */
export function dso(ar: number, creditSales: number, days: number): Ratio {
  const r = ratio(ar, creditSales, { denominatorLabel: 'credit sales in the period' });
  if (r.value === null) return r;
  return { value: Math.round(r.value * days * 100) / 100 + 0 };
}

/** Due instant: Mexico City invoice day + credit days (calendar days). */
export const dueInstant = (invoiceMs: number, creditDays: number): number => mxDayStart(mxAddDays(mxDateString(invoiceMs), Math.round(creditDays)));

/** An invoice with the instants of its valid payment complements (lib/analytics/receivables-repo.ts). */
export interface PaidInvoice {
  client: string;
  /** Invoice instant, epoch ms. */
  date: number;
  paid: number[];
}

/** One past payment per valid complement, due on invoice day + the client's credit days. */
export function pastPayments(history: readonly PaidInvoice[], creditDays: (client: string) => number): PastPayment[] {
  const past: PastPayment[] = [];
  for (const row of history) {
    const due = dueInstant(row.date, creditDays(row.client));
    for (const paidAt of row.paid) past.push({ client: row.client, dueDate: due, paidDate: paidAt });
  }
  return past;
}

/**
 * An invoice still owed, its outstanding balance recomputed exactly in cents by lib/finance
 * (in MXN: a document in another currency at its exchange rate); null when cancelled or settled.
 */
export function openInvoiceOf(row: BalanceInput & { id: string; client: string; date: number; exchangeRate?: number }): OpenInvoice | null {
  const bal = documentBalance(row);
  if (bal.isCancelled || toCents(bal.pending) <= 0) return null;
  return { id: row.id, client: row.client, invoiceDate: row.date, outstanding: toMxn(bal.pending, rateOf(row)) };
}

/**
 * The invoices still owed, with their outstanding balance recomputed exactly
 * in cents by lib/finance (cancelled or settled ones dropped), keyed by id.
 */
export function openInvoicesOf<R extends BalanceInput & { id: string; client: string; date: number; exchangeRate?: number }>(
  rows: Iterable<R>,
): { invoices: OpenInvoice[]; byId: Map<string, R> } {
  const byId = new Map<string, R>();
  const invoices: OpenInvoice[] = [];
  for (const row of rows) {
    const inv = openInvoiceOf(row);
    if (!inv) continue;
    byId.set(row.id, row);
    invoices.push(inv);
  }
  return { invoices, byId };
}

export interface ForecastClientRow {
  client: string;
  clientName: string;
  openInvoices: number;
  outstanding: number;
  pastDue: number;
  creditDays: number;
  creditDaysSource: 'client' | 'default';
  delayDays: number;
  delayBasis: DelayBasis;
  paymentsInHistory: number;
  nextExpectedDate: string | null;
}

export interface ClientTerms {
  creditDaysDefault: number;
  creditDaysByClient: Readonly<Record<string, number>>;
  /** Display name of a client, read from the invoice (by id) that comes first for it. */
  clientName: (invoiceId: string) => string;
}

export interface ClientReceivables {
  /** Largest outstanding first, then the client. */
  clients: ForecastClientRow[];
  pastDue: { invoices: number; amount: number };
  notYetDue: { invoices: number; amount: number };
  outstanding: number;
}

/** What a client's open invoices add up to, in MXN cents; `next`: the earliest expected day of those not past due. */
export interface ClientOpenSums {
  name: string;
  n: number;
  outC: number;
  pastDueC: number;
  next: string | null;
}

/** The per-client rows of the forecast, the largest outstanding first (then by RFC): from the documents or from kept sums. */
export function forecastClientRows(
  clients: ReadonlyMap<string, ClientOpenSums>,
  terms: Pick<ClientTerms, 'creditDaysByClient' | 'creditDaysDefault'>,
  delays: PaymentDelays,
): ForecastClientRow[] {
  return [...clients.entries()]
    .sort(([ra, a], [rb, b]) => b.outC - a.outC || (ra < rb ? -1 : 1))
    .map(([rfc, c]) => {
      const d = delayFor(delays, rfc);
      return {
        client: rfc,
        clientName: c.name,
        openInvoices: c.n,
        outstanding: fromCents(c.outC),
        pastDue: fromCents(c.pastDueC),
        creditDays: terms.creditDaysByClient[rfc] ?? terms.creditDaysDefault,
        creditDaysSource: rfc in terms.creditDaysByClient ? ('client' as const) : ('default' as const),
        delayDays: d.delayDays,
        delayBasis: d.basis,
        paymentsInHistory: delays.paymentsByClient.get(rfc) ?? 0,
        nextExpectedDate: c.next,
      };
    });
}

/**
 * Receivables per client: open invoices, outstanding and past-due amounts
 * (due date before asOf's day), the terms applied and the next expected
 * collection among the invoices not yet due.
 */
export function clientReceivables(
  items: readonly (Pick<ForecastItem, 'id' | 'client' | 'outstanding' | 'expectedDate'> & { pastDue: boolean })[],
  terms: ClientTerms,
  delays: PaymentDelays,
): ClientReceivables {
  const clients = new Map<string, ClientOpenSums>();
  let totalC = 0;
  let pastDueC = 0;
  let pastDueN = 0;
  for (const i of items) {
    const c = clients.get(i.client) ?? { name: terms.clientName(i.id), n: 0, outC: 0, pastDueC: 0, next: null };
    c.n += 1;
    c.outC += toCents(i.outstanding);
    totalC += toCents(i.outstanding);
    if (i.pastDue) {
      c.pastDueC += toCents(i.outstanding);
      pastDueC += toCents(i.outstanding);
      pastDueN += 1;
    } else if (c.next === null || i.expectedDate < c.next) c.next = i.expectedDate;
    clients.set(i.client, c);
  }
  const rows = forecastClientRows(clients, terms, delays);
  return {
    clients: rows,
    pastDue: { invoices: pastDueN, amount: fromCents(pastDueC) },
    notYetDue: { invoices: items.length - pastDueN, amount: fromCents(totalC - pastDueC) },
    outstanding: fromCents(totalC),
  };
}
