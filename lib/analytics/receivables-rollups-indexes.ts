/** The indexes of the as-of reports' kept forms (lib/analytics/receivables-rollups-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs, RetiredIndexes } from '../db/indexes.ts';

export const RECEIVABLES_ROLLUP_INDEXES: IndexSpecs = {
  [COLLECTIONS.openItems]: [
    // A recomputed day replaces the entries of the invoices emitted on it.
    { key: { tenant: 1, day: 1 }, name: 'tenant_day' },
    // The items of a report of now: the entries open now walked by invoice day, the oldest first (kept-receivables.ts);
    // and the entries closing after T (`to` in (T, OPEN_END)); with or without a client.
    { key: { tenant: 1, to: 1, day: 1 }, name: 'tenant_to_day' },
    { key: { tenant: 1, client: 1, to: 1, day: 1 }, name: 'tenant_client_to_day' },
  ],
  // The open items by month (open-item-months.ts): T's month and the open spans, the days up to T's; a recomputed day replaces its own.
  [COLLECTIONS.openItemMonths]: [
    { key: { tenant: 1, month: 1, day: 1 }, name: 'tenant_month_day' },
    { key: { tenant: 1, day: 1 }, name: 'tenant_day' },
  ],
  [COLLECTIONS.receivablesDays]: [{ key: { tenant: 1, day: 1 }, name: 'tenant_day' }],
  // The sums of the invoices open now (open-now.ts): every day of a tenant read at once; a recomputed day replaces its own.
  // Whether they hold at T: the days changed after T, found without reading the others.
  [COLLECTIONS.openNowDays]: [
    { key: { tenant: 1, day: 1 }, name: 'tenant_day' },
    { key: { tenant: 1, horizon: 1 }, name: 'tenant_horizon' },
  ],
  // The financial-docs list's openAsOf (open-spans-repo.ts): a bucket (the month a stretch ended in, or 'open') walked
  // in the list's order, and every stretch counted by from and by to; with or without a client.
  [COLLECTIONS.openSpans]: [
    { key: { tenant: 1, bucket: 1, date: 1, timestamp: 1, docId: 1 }, name: 'tenant_bucket_date' },
    { key: { tenant: 1, client: 1, bucket: 1, date: 1, timestamp: 1, docId: 1 }, name: 'tenant_client_bucket_date' },
    { key: { tenant: 1, from: 1 }, name: 'tenant_from' },
    { key: { tenant: 1, client: 1, from: 1 }, name: 'tenant_client_from' },
    { key: { tenant: 1, to: 1 }, name: 'tenant_to' },
    { key: { tenant: 1, client: 1, to: 1 }, name: 'tenant_client_to' },
    { key: { tenant: 1, day: 1 }, name: 'tenant_day' },
  ],
};

/**
 * Replaced by the open items by month (openItemMonths): "open at T" no longer reads each entry of T's month
 * (`tenant_[client_]months_from`). And `tenant_[client_]to_from`: the entries closing after T are a range of `to`
 * alone, which `tenant_[client_]to_day` serves as well; two index entries fewer on every entry written. The list's
 * spans were stored once per month they touched (`month`, version 4): now once, in the bucket of their end.
 */
export const RETIRED_RECEIVABLES_INDEXES: RetiredIndexes = {
  [COLLECTIONS.openItems]: ['tenant_months_from', 'tenant_client_months_from', 'tenant_to_from', 'tenant_client_to_from'],
  [COLLECTIONS.openSpans]: [
    'tenant_month_date',
    'tenant_client_month_date',
    'tenant_month_from',
    'tenant_client_month_from',
    'tenant_month_to',
    'tenant_client_month_to',
  ],
};
