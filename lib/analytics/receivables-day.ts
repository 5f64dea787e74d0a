/**
 * The cash inflow forecast's kept day (docs/rollups.md "Receivables"): per tenant and Mexico City
 * day, what the forecast learns from its period besides the open items:
 *  - `revenue`: the invoices emitted that day, summed as revenueByClient groups them (client,
 *    cancelled now, exchange rate) in integer cents of their own currency, so a period adds its
 *    days' groups and converts each once, exactly as the document query does;
 *  - `paid`: the valid payment complements of PPD invoices dated that day (streamPaymentHistory's
 *    rule; a PUE invoice's receipt at its own date is no complement and says nothing of how late
 *    its client pays), counted
 *    per client and lag (payment day − invoice day): a delay is the lag − the client's credit
 *    days, so medians under any credit terms come out exact.
 * Nothing kept depends on the tenant's settings (credit days apply when read).
 */
import type { FinancialDocument, PaymentRecord, CanceledRecord } from '../model/financial-document.ts';
import { isInvoiceCancelled, isPaymentCancelled } from '../finance/cancellation.ts';
import { daysBetweenDates, mxDateString } from '../time/mexico-city.ts';
import type { RevenueGroup } from './receivables-repo.ts';

/** Bump when what a day or an open item holds, or how it is computed, changes: the store is rebuilt. */
export const RECEIVABLES_ROLLUP_VERSION = 7;

export interface PaidCount {
  client: string;
  /** Payment day − invoice day (Mexico City calendar days). */
  lag: number;
  n: number;
}

export interface ReceivablesDay {
  /** `${tenant}|${day}`. */
  _id: string;
  tenant: string;
  /** 'YYYY-MM-DD', Mexico City. */
  day: string;
  revenue: RevenueGroup[];
  paid: PaidCount[];
}

export type ReceivablesDaySource = Pick<FinancialDocument, 'client' | 'date' | 'iSub' | 'iDesc' | 'iFalt' | 'iTot' | 'exchangeRate'> & {
  invoice: Pick<FinancialDocument['invoice'], 'uuid' | 'paymentMethod'>;
  payments?: readonly PaymentRecord[] | null;
  canceled?: readonly CanceledRecord[] | null;
};

export const receivablesDayId = (tenant: string, day: string): string => `${tenant}|${day}`;

/** centsExpr of lib/db/pipeline.ts in JS: the same double arithmetic, missing → 0. */
const centsExprOf = (x: unknown): number => Math.floor((typeof x === 'number' ? x : 0) * 100 + 0.5);

const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A day kept from the documents emitted on it (`emitted`) and those with a payment record dated
 * on it (`paidOn`); null when neither holds anything. Rows in a fixed order, so a day computed
 * twice is the same document.
 */
export function rollUpReceivablesDay(
  tenant: string,
  day: string,
  range: { start: number; end: number },
  emitted: readonly ReceivablesDaySource[],
  paidOn: readonly ReceivablesDaySource[],
): ReceivablesDay | null {
  const revenue = new Map<string, RevenueGroup>();
  for (const d of emitted) {
    const cancelled = isInvoiceCancelled({ invoice: d.invoice, canceled: d.canceled ?? [] });
    const rate = d.exchangeRate ?? 1;
    const k = `${d.client}|${cancelled}|${rate}`;
    const g = revenue.get(k) ?? { client: d.client, cancelled, rate, documents: 0, revenueC: 0, totalC: 0 };
    g.documents += 1;
    g.revenueC += centsExprOf(d.iSub) - centsExprOf(d.iDesc) - centsExprOf(d.iFalt);
    g.totalC += centsExprOf(d.iTot);
    revenue.set(k, g);
  }
  const paid = new Map<string, PaidCount>();
  for (const d of paidOn) {
    const doc = { invoice: d.invoice, canceled: d.canceled ?? [] };
    if (isInvoiceCancelled(doc) || d.invoice.paymentMethod === 'PUE' || !Number.isFinite(d.date)) continue;
    const invoiceDay = mxDateString(d.date);
    for (const p of d.payments ?? []) {
      if (p.kind !== 'payment' || !(p.date >= range.start && p.date <= range.end) || isPaymentCancelled(doc, p)) continue;
      const lag = daysBetweenDates(invoiceDay, mxDateString(p.date));
      const k = `${d.client}|${lag}`;
      const c = paid.get(k) ?? { client: d.client, lag, n: 0 };
      c.n += 1;
      paid.set(k, c);
    }
  }
  if (!revenue.size && !paid.size) return null;
  return {
    _id: receivablesDayId(tenant, day),
    tenant,
    day,
    revenue: [...revenue.entries()].sort(([a], [b]) => byKey(a, b)).map(([, g]) => g),
    paid: [...paid.entries()].sort(([a], [b]) => byKey(a, b)).map(([, c]) => c),
  };
}
