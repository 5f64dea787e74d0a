/**
 * Receivables aging as of a day (docs/domain.md "Receivables as of a date"): each open invoice
 * falls in one bucket by its days past due on the as-of day (as-of day − due day, Mexico City
 * calendar days; due day = invoice day + the client's credit days): current (not yet due or due
 * that day), 1–30, 31–60, 61–90, over 90. Amounts are the outstanding balance in MXN at each
 * invoice's own rate; sums are kept in integer cents.
 */
import { clientList, type ReportOptions } from '../shared/client-list.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { daysBetweenDates, mxAddDays, mxDateString } from '../time/mexico-city.ts';
import { TopList, type Capped } from './report.ts';

export const AGING_BUCKETS = ['current', 'days1to30', 'days31to60', 'days61to90', 'over90'] as const;
export type AgingBucket = (typeof AGING_BUCKETS)[number];

/** The bucket of an invoice `daysPastDue` days past its due day (≤ 0: current). */
export function agingBucket(daysPastDue: number): AgingBucket {
  if (daysPastDue <= 0) return 'current';
  if (daysPastDue <= 30) return 'days1to30';
  if (daysPastDue <= 60) return 'days31to60';
  if (daysPastDue <= 90) return 'days61to90';
  return 'over90';
}

export interface AgingAmount {
  invoices: number;
  amount: number;
}
export type AgingBuckets = Record<AgingBucket, AgingAmount>;

/** An invoice open on the as-of day, its balance already in MXN. */
export interface OpenReceivable {
  id: string;
  uuid: string;
  client: string;
  clientName: string;
  /** Invoice instant, epoch ms. */
  invoiceDate: number;
  outstanding: number;
  currency: string;
  exchangeRate: number;
}

export interface AgingItem {
  id: string;
  uuid: string;
  client: string;
  invoiceDate: string;
  dueDate: string;
  daysPastDue: number;
  bucket: AgingBucket;
  outstanding: number;
  currency: string;
  exchangeRate: number;
}

export interface AgingClientRow {
  client: string;
  clientName: string;
  creditDays: number;
  openInvoices: number;
  outstanding: number;
  buckets: AgingBuckets;
}

export interface Aging {
  totals: { openInvoices: number; outstanding: number; buckets: AgingBuckets };
  /** Clients by outstanding, largest first (ties by RFC); `total` counts them all. */
  clients: Capped<AgingClientRow>;
  /** Invoices by days past due, oldest first (ties by id); `total` counts them all. */
  items: Capped<AgingItem>;
}

interface Sums {
  n: number;
  cents: number;
  byBucket: Record<AgingBucket, { n: number; cents: number }>;
}
const emptySums = (): Sums => ({ n: 0, cents: 0, byBucket: Object.fromEntries(AGING_BUCKETS.map((b) => [b, { n: 0, cents: 0 }])) as Sums['byBucket'] });
const bucketsOut = (s: Sums): AgingBuckets =>
  Object.fromEntries(AGING_BUCKETS.map((b) => [b, { invoices: s.byBucket[b].n, amount: fromCents(s.byBucket[b].cents) }])) as AgingBuckets;

const byAge = (a: AgingItem, b: AgingItem): number => b.daysPastDue - a.daysPastDue || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * Folds open invoices one at a time: per-client and total sums (one entry per client) and the
 * `limit` oldest items, so memory does not grow with the number of open invoices.
 */
export class AgingAccumulator {
  private readonly total = emptySums();
  /** Per client its sums and the name on its latest open invoice (date, then id): the same whatever order invoices come in. */
  private readonly clients = new Map<string, Sums & { name: string; nameDate: number; nameId: string }>();
  private readonly items: TopList<AgingItem>;

  constructor(
    private readonly asOfDay: string,
    private readonly creditDays: (client: string) => number,
    private readonly limit: number,
    private readonly opts: ReportOptions = {},
  ) {
    this.items = new TopList<AgingItem>(limit, byAge);
  }

  /** An invoice: its sums and its item. */
  add(inv: OpenReceivable): void {
    const due = this.dueOf(inv.client, mxDateString(inv.invoiceDate));
    this.addSums(inv.client, due.bucket, 1, toCents(inv.outstanding), inv.invoiceDate, inv.id, inv.clientName);
    this.addItem(inv);
  }

  /**
   * `n` invoices of a client emitted on `invoiceDay` owing `cents` in all, the latest of them
   * (instant, id) named `name` (the kept sums of lib/analytics/open-now.ts): their sums only, their
   * items are offered apart (addItem), and the items' total is the invoices summed.
   */
  addGroup(client: string, invoiceDay: string, n: number, cents: number, latest: { date: number; id: string; name: string }): void {
    this.addSums(client, this.dueOf(client, invoiceDay).bucket, n, cents, latest.date, latest.id, latest.name);
  }

  /** An invoice's item only (its sums come with addGroup). */
  addItem(inv: OpenReceivable): void {
    const { dueDate, daysPastDue, bucket } = this.dueOf(inv.client, mxDateString(inv.invoiceDate));
    this.items.add({
      id: inv.id,
      uuid: inv.uuid,
      client: inv.client,
      invoiceDate: new Date(inv.invoiceDate).toISOString(),
      dueDate,
      daysPastDue,
      bucket,
      outstanding: inv.outstanding,
      currency: inv.currency,
      exchangeRate: inv.exchangeRate,
    });
  }

  /** The due day of an invoice of `client` emitted on `invoiceDay`: the items rank by it (the earliest first). */
  dueDate(client: string, invoiceDay: string): string {
    return mxAddDays(invoiceDay, Math.round(this.creditDays(client)));
  }

  private dueOf(client: string, invoiceDay: string): { dueDate: string; daysPastDue: number; bucket: AgingBucket } {
    const dueDate = this.dueDate(client, invoiceDay);
    const daysPastDue = daysBetweenDates(dueDate, this.asOfDay);
    return { dueDate, daysPastDue, bucket: agingBucket(daysPastDue) };
  }

  private addSums(clientRfc: string, bucket: AgingBucket, n: number, cents: number, date: number, id: string, name: string): void {
    const client = this.clients.get(clientRfc) ?? { ...emptySums(), name, nameDate: date, nameId: id };
    if (date > client.nameDate || (date === client.nameDate && id > client.nameId)) {
      client.name = name;
      client.nameDate = date;
      client.nameId = id;
    }
    this.clients.set(clientRfc, client);
    for (const s of [this.total, client]) {
      s.n += n;
      s.cents += cents;
      s.byBucket[bucket].n += n;
      s.byBucket[bucket].cents += cents;
    }
  }

  result(): Aging {
    const rows: AgingClientRow[] = [...this.clients.entries()].map(([client, s]) => ({
      client,
      clientName: s.name,
      creditDays: this.creditDays(client),
      openInvoices: s.n,
      outstanding: fromCents(s.cents),
      buckets: bucketsOut(s),
    }));
    rows.sort((a, b) => toCents(b.outstanding) - toCents(a.outstanding) || (a.client < b.client ? -1 : a.client > b.client ? 1 : 0));
    return {
      totals: { openInvoices: this.total.n, outstanding: fromCents(this.total.cents), buckets: bucketsOut(this.total) },
      clients: clientList(rows, this.limit, this.opts),
      // Every invoice summed is an item, offered to the list or not (addGroup).
      items: { ...this.items.capped(), total: this.total.n },
    };
  }
}
