/**
 * The rows of one month's tax position, read once for the three operations that show them
 * (getTaxPosition, listTaxPositionLines, getDiot): the issued invoices collected in the month
 * (lib/tax/tax-repo.ts, cash basis), and the received CFDIs settled in it and in the month before
 * (whose IVA retained is creditable this month). Streams the documents, keeps compact lines.
 */
import type { ServiceContext } from '../context.ts';
import { mxMonthKey, mxMonthRange } from '../time/mexico-city.ts';
import { normalizeTaxDoc } from './normalize-tax-doc.ts';
import { streamTaxDocs } from './tax-repo.ts';
import { streamSettledReceivedDocs } from './tax-position-repo.ts';
import { issuedLines, paymentLines, type CollectionLine, type MonthRange, type PaymentLine } from './tax-position.ts';

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
    collections.push(...issuedLines(normalizeTaxDoc(raw), range));
  }
  const payments: PaymentLine[] = [];
  const previousPayments: PaymentLine[] = [];
  for await (const doc of streamSettledReceivedDocs(ctx.db, tenant, previous.start, range.endExclusive - 1, ctx.config.queryTimeoutMs)) {
    payments.push(...paymentLines(doc, range));
    previousPayments.push(...paymentLines(doc, previous));
  }
  return { range, previous, collections, payments, previousPayments };
}
