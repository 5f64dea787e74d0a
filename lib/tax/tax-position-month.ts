/**
 * The rows of one month's tax position, read once for the three operations that show them
 * (getTaxPosition, listTaxPositionLines, getDiot): the issued invoices collected in the month
 * (lib/tax/tax-repo.ts, cash basis), and the received CFDIs settled in it and in the month before
 * (whose IVA retained is creditable this month). Streams the documents, keeps compact lines.
 */
import type { Db } from 'mongodb';
import type { ServiceContext } from '../context.ts';
import { mxMonthKey, mxMonthRange } from '../time/mexico-city.ts';
import { normalizeTaxDoc } from './normalize-tax-doc.ts';
import { inPaymentBasisPeriod, streamTaxDocs } from './tax-repo.ts';
import { streamSettledReceivedDocs } from './tax-position-repo.ts';
import { collectionLine, paymentLines, type CollectionLine, type MonthRange, type PaymentLine } from './tax-position.ts';

export interface MonthRows {
  range: MonthRange;
  previous: MonthRange;
  collections: CollectionLine[];
  payments: PaymentLine[];
  previousPayments: PaymentLine[];
}

export const monthRange = (month: string): MonthRange => ({ month, ...mxMonthRange(month) });

export async function monthRows(ctx: ServiceContext, tenant: string, month: string): Promise<MonthRows> {
  const range = monthRange(month);
  const previous = monthRange(mxMonthKey(range.start - 1));
  const collections: CollectionLine[] = [];
  const issued = streamTaxDocs(ctx.db, tenant, { basis: 'payment', start: range.start, end: range.endExclusive - 1 }, ctx.config.queryTimeoutMs);
  for await (const raw of issued) {
    const line = collectionLine(normalizeTaxDoc(raw), range);
    if (line) collections.push(line);
  }
  const payments: PaymentLine[] = [];
  const previousPayments: PaymentLine[] = [];
  for await (const doc of streamSettledReceivedDocs(ctx.db, tenant, previous.start, range.endExclusive - 1, ctx.config.queryTimeoutMs)) {
    payments.push(...paymentLines(doc, range));
    previousPayments.push(...paymentLines(doc, previous));
  }
  return { range, previous, collections, payments, previousPayments };
}

/**
 * The rows of months of a tenant (sorted, any gaps), each of its own month alone (its collections
 * and the payments dated in it): what the months' kept totals are computed from
 * (refresh-tax-position.ts), the same lines monthRows gives. One read of each collection for all
 * (a rebuild's run of months), each month's rows from the documents its own read would select.
 */
export async function ownMonthsRows(
  db: Db,
  tenant: string,
  ranges: readonly MonthRange[],
  maxTimeMS: number,
): Promise<Map<string, { collections: CollectionLine[]; payments: PaymentLine[] }>> {
  const out = new Map(ranges.map((r) => [r.month, { collections: [] as CollectionLine[], payments: [] as PaymentLine[] }]));
  const first = ranges[0];
  const last = ranges[ranges.length - 1];
  if (!first || !last) return out;
  const end = last.endExclusive - 1;
  for await (const raw of streamTaxDocs(db, tenant, { basis: 'payment', start: first.start, end }, maxTimeMS)) {
    const hits = ranges.filter((r) => inPaymentBasisPeriod(raw, r.start, r.endExclusive - 1));
    if (!hits.length) continue;
    const doc = normalizeTaxDoc(raw);
    for (const r of hits) {
      const line = collectionLine(doc, r);
      if (line) out.get(r.month)?.collections.push(line);
    }
  }
  // paymentLines keeps a month's own settlements only: a document settled in none of it adds nothing.
  for await (const doc of streamSettledReceivedDocs(db, tenant, first.start, end, maxTimeMS))
    for (const r of ranges) out.get(r.month)?.payments.push(...paymentLines(doc, r));
  return out;
}
