/**
 * What the as-of reports read from the kept forms (docs/rollups.md "Receivables") instead of the
 * documents: the invoices open at an instant (the open-items index), the payment delays of a
 * period and its revenue by client (the kept days). Each answers what the document queries of
 * receivables-repo.ts answer, in a form the reports fold the same way.
 */
import type { Db } from 'mongodb';
import { mxAddDays, mxDateString, mxDayEnd, mxDayStart } from '../time/mexico-city.ts';
import { rateOf } from '../money/currency.ts';
import { itemOutstandingAt } from './open-items.ts';
import type { OpenReceivable } from './receivables-aging.ts';
import { PaymentDelaysAccumulator } from './forecast.ts';
import { clientRevenueRows, streamPaymentHistory, type ClientRevenueRow, type RevenueGroup } from './receivables-repo.ts';
import { readOpenItemsAt, readReceivablesDays } from './receivables-rollups-repo.ts';
import type { ReceivablesDay } from './receivables-day.ts';
import { receivablesRollups, settleReceivablesMarks } from './receivables-rollup-kind.ts';

/**
 * Whether a report reads the kept forms: the store was built by this version and the report was
 * not asked for the documents. Then the marked days up to `lastDay` are settled first.
 */
export async function useKeptReceivables(db: Db, tenant: string, lastDay: string, maxTimeMS: number, fromDocuments: boolean | undefined): Promise<boolean> {
  if (fromDocuments || !(await receivablesRollups.ready(db))) return false;
  await settleReceivablesMarks(db, tenant, lastDay, maxTimeMS);
  return true;
}

/** The invoices open at instant `asOf` with their outstanding MXN balance (the reports fold them in any order). */
export async function keptOpenReceivables(db: Db, tenant: string, asOf: number, client: string | undefined, maxTimeMS: number): Promise<OpenReceivable[]> {
  const out: OpenReceivable[] = [];
  for (const e of await readOpenItemsAt(db, tenant, asOf, client, maxTimeMS)) {
    const outstanding = itemOutstandingAt(e, asOf);
    if (outstanding === null) continue;
    out.push({
      id: e.id,
      uuid: e.uuid,
      client: e.client,
      clientName: e.clientName,
      invoiceDate: e.date,
      outstanding,
      currency: e.currency ?? 'MXN',
      exchangeRate: rateOf(e),
    });
  }
  return out;
}

/** The kept days a forecast reads, [startDate, lastDay] (its period and up to its as-of day): one read serves both uses below. */
export function readForecastDays(db: Db, tenant: string, startDate: string, lastDay: string, maxTimeMS: number): Promise<ReceivablesDay[]> {
  return readReceivablesDays(db, tenant, startDate, lastDay, maxTimeMS);
}

/**
 * The payment delays of the valid complements dated in [from, asOf] (from: the first instant of
 * `startDate`): the kept days' lags shifted by each client's credit days, and the documents of a
 * last day asOf cuts short (today's, before its end).
 */
export async function keptPaymentDelays(
  db: Db,
  tenant: string,
  keptDays: readonly ReceivablesDay[],
  q: { startDate: string; asOf: number; client?: string },
  creditDays: (client: string) => number,
  acc: PaymentDelaysAccumulator,
  maxTimeMS: number,
): Promise<void> {
  const from = mxDayStart(q.startDate);
  if (q.asOf < from) return;
  const asOfDay = mxDateString(q.asOf);
  const whole = q.asOf === mxDayEnd(asOfDay);
  const lastKept = whole ? asOfDay : mxAddDays(asOfDay, -1);
  for (const day of keptDays) {
    if (day.day < q.startDate || day.day > lastKept) continue;
    for (const p of day.paid) if (q.client === undefined || p.client === q.client) acc.addDelays(p.client, p.lag - Math.round(creditDays(p.client)), p.n);
  }
  if (whole) return;
  for await (const row of streamPaymentHistory(
    db,
    tenant,
    { from: Math.max(from, mxDayStart(asOfDay)), to: q.asOf, ...(q.client ? { client: q.client } : {}) },
    maxTimeMS,
  ))
    acc.addInvoice(row, creditDays);
}

/** Revenue by client of the invoices emitted in [startDate, endDate] (whole days), from the kept days. */
export function keptRevenueByClient(keptDays: readonly ReceivablesDay[], q: { startDate: string; endDate: string; client?: string }): ClientRevenueRow[] {
  const groups = new Map<string, RevenueGroup>();
  for (const day of keptDays) {
    if (day.day < q.startDate || day.day > q.endDate) continue;
    for (const g of day.revenue) {
      if (q.client !== undefined && g.client !== q.client) continue;
      const k = `${g.client}|${g.cancelled}|${g.rate}`;
      const sum = groups.get(k) ?? { ...g, documents: 0, revenueC: 0, totalC: 0 };
      sum.documents += g.documents;
      sum.revenueC += g.revenueC;
      sum.totalC += g.totalC;
      groups.set(k, sum);
    }
  }
  return clientRevenueRows(groups.values());
}
