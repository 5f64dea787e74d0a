/**
 * The tax summary's totals as kept on write (docs/rollups.md), summed per client with the
 * findings counted, and where each finding is, for the index the summary lists from:
 * - invoice basis, per Mexico City day: the contributions of every document emitted that day;
 *   a summary of any period adds its days' rows (TaxTotalsAccumulator.addDayRow);
 * - payment (cash) basis, per month: the contributions of the month as one period (a document
 *   counts once in it however many of its payments fall in it); a summary of that month reads it.
 *   A month is added up from its days' shares ('paymentDay'), so a write recomputes only the days
 *   it marks: each document's contribution to the month lies on its first day in the month (its
 *   PUE date or its first payment record's), a day of the document, which its writes mark.
 * The figures are the ones of reconciling every document because both fold the same
 * contributions (reconcileDocument, invoiceBasisContribution, paymentBasisContributions). Pure.
 */
import type { FinancialDocument } from '../model/financial-document.ts';
import { Acc, invoiceBasisContribution, namesLater, paymentBasisContributions, type TaxAccState, type TaxContribution } from './tax-totals.ts';
import { mxDateString, mxMonthRange } from '../time/mexico-city.ts';
import { reconcileDocument, type FindingCode, type FindingKind, type ReconcileSettings } from './reconcile.ts';
import type { TaxpayerKind } from './rfc.ts';

/**
 * Bumped whenever what a day's totals hold or how a document is reconciled changes: stored days
 * of another version are recomputed, like days kept under other settings (6: on the payment basis a foreign-currency
 * invoice's amounts are converted at the rate of the part of its payments that counts, an overpayment weighing nothing;
 * 7: a Total is checked with the local taxes the CFDI adds and takes off).
 */
export const TAX_ROLLUP_VERSION = 7;

/** The settings a day's totals depend on, with the version: a day kept under another fingerprint is stale. */
export function taxRollupFingerprint(settings: ReconcileSettings): string {
  return `v${TAX_ROLLUP_VERSION}|vat=${settings.vatRate}|ret=${settings.retentionRate}|tol=${settings.discrepancyTolerance}`;
}

export interface FindingCounts {
  total: number;
  byKind: Record<FindingKind, number>;
  byCode: Partial<Record<FindingCode, number>>;
}

export interface TaxDayRow {
  client: string;
  clientName: string;
  clientKind: TaxpayerKind | 'unknown';
  /** The document the name was taken from: the client's latest of the day (date, then id). */
  nameAt: number;
  nameDocId: string;
  acc: TaxAccState;
  /** Every finding of the day's documents of this client, cancelled ones included (what the summary's findings count). */
  findingCounts: FindingCounts;
}

export type RollupBasis = 'invoice' | 'payment';

/** What a kept document holds: an invoice-basis day, a payment-basis month, or a payment-basis month's share on one day. */
export type KeptTaxBasis = RollupBasis | 'paymentDay';

export interface TaxDayRollup {
  /** `${tenant}|${basis}|${day}`. */
  _id: string;
  tenant: string;
  basis: KeptTaxBasis;
  /** The day ('YYYY-MM-DD', invoice basis and paymentDay) or the month ('YYYY-MM', payment basis) kept. */
  day: string;
  month: string;
  fingerprint: string;
  rows: TaxDayRow[];
}

/**
 * Where one finding is, kept in an index of its own so a summary reads only the first `limit`
 * keys and reconciles just those documents again for the text (small records: a year of a
 * large tenant holds hundreds of thousands).
 */
export interface IndexedFinding {
  /** `${tenant}|${basis}|${docId}|${n}` (payment basis: `|${month}` after the basis): the n-th finding of the document's reconciliation. */
  _id: string;
  tenant: string;
  basis: RollupBasis;
  /** The kept day or month it belongs to. */
  day: string;
  /** Payment basis: the day whose share of the month holds it (recomputed with that day). */
  bucket?: string;
  dateMs: number;
  client: string;
  kind: FindingKind;
  docId: string;
  n: number;
  conceptIndex: number | null;
  code: FindingCode;
}

export const taxRollupId = (tenant: string, basis: KeptTaxBasis, day: string): string => `${tenant}|${basis}|${day}`;

interface RowBuilder {
  row: Omit<TaxDayRow, 'acc'>;
  acc: Acc;
}

/** The totals and findings of one tenant's day from the documents emitted that day (invoice basis). */
export function rollUpTaxDay(
  tenant: string,
  day: string,
  docs: readonly FinancialDocument[],
  settings: ReconcileSettings,
): { rollup: TaxDayRollup; findings: IndexedFinding[] } {
  return rollUp(tenant, 'invoice', day, docs, settings, (doc, r) => invoiceBasisContribution(doc, r));
}

/**
 * The day a document's contribution to a payment-basis month lies on: its first day in the month
 * that selects it there (its PUE date, a payment record's date); null when none is in the month.
 */
export function paymentBasisDay(doc: Pick<FinancialDocument, 'date' | 'invoice' | 'payments'>, range: { start: number; endExclusive: number }): string | null {
  const within = (t: number): boolean => t >= range.start && t < range.endExclusive;
  let first = Infinity;
  if (doc.invoice.paymentMethod === 'PUE' && within(doc.date)) first = doc.date;
  for (const p of doc.payments) if (within(p.date) && p.date < first) first = p.date;
  return first === Infinity ? null : mxDateString(first);
}

/**
 * A payment-basis month's share on one day: the contributions to the month of the documents
 * whose payment-basis day it is (paymentBasisDay), and their findings (listed with the month).
 */
export function rollUpTaxPaymentDay(
  tenant: string,
  day: string,
  docs: readonly FinancialDocument[],
  settings: ReconcileSettings,
): { rollup: TaxDayRollup; findings: IndexedFinding[] } {
  const month = day.slice(0, 7);
  const slice = { month, ...mxMonthRange(month) };
  return rollUp(tenant, 'paymentDay', day, docs, settings, (doc, r) => paymentBasisContributions(doc, r, [slice])[0] ?? null);
}

/** A payment-basis month from its days' shares (any order): the rows of each client added up. */
export function addUpTaxMonth(tenant: string, month: string, days: readonly TaxDayRollup[], settings: ReconcileSettings): TaxDayRollup {
  const byClient = new Map<string, RowBuilder>();
  for (const d of days)
    for (const row of d.rows) {
      const { acc, ...named } = row;
      let b = byClient.get(row.client);
      if (!b) {
        b = { row: { ...named, findingCounts: { total: 0, byKind: { discrepancy: 0, warning: 0, info: 0 }, byCode: {} } }, acc: new Acc() };
        byClient.set(row.client, b);
      } else if (namesLater(row.nameAt, row.nameDocId, b.row)) {
        Object.assign(b.row, { clientName: row.clientName, clientKind: row.clientKind, nameAt: row.nameAt, nameDocId: row.nameDocId });
      }
      b.acc.merge(acc);
      const counts = b.row.findingCounts;
      counts.total += row.findingCounts.total;
      for (const k of Object.keys(counts.byKind) as FindingKind[]) counts.byKind[k] += row.findingCounts.byKind[k];
      for (const [code, n] of Object.entries(row.findingCounts.byCode) as [FindingCode, number][]) counts.byCode[code] = (counts.byCode[code] ?? 0) + n;
    }
  return {
    _id: taxRollupId(tenant, 'payment', month),
    tenant,
    basis: 'payment',
    day: month,
    month,
    fingerprint: taxRollupFingerprint(settings),
    rows: sortedRows(byClient),
  };
}

const sortedRows = (byClient: ReadonlyMap<string, RowBuilder>): TaxDayRow[] =>
  [...byClient.values()].map((b) => ({ ...b.row, acc: b.acc.state() })).sort((a, b) => (a.client < b.client ? -1 : a.client > b.client ? 1 : 0));

function rollUp(
  tenant: string,
  basis: 'invoice' | 'paymentDay',
  key: string,
  docs: readonly FinancialDocument[],
  settings: ReconcileSettings,
  contribute: (doc: FinancialDocument, r: ReturnType<typeof reconcileDocument>) => TaxContribution | null,
): { rollup: TaxDayRollup; findings: IndexedFinding[] } {
  const byClient = new Map<string, RowBuilder>();
  const findings: IndexedFinding[] = [];
  let month = key.slice(0, 7);
  for (const doc of docs) {
    const r = reconcileDocument(doc, settings);
    const c = contribute(doc, r);
    if (!c) continue; // payment basis: selected, but nothing that counts falls in the month
    month = c.month;
    let b = byClient.get(c.client);
    if (!b) {
      b = {
        row: {
          client: c.client,
          clientName: c.clientName,
          clientKind: c.clientKind,
          nameAt: c.dateMs,
          nameDocId: c.docId,
          findingCounts: { total: 0, byKind: { discrepancy: 0, warning: 0, info: 0 }, byCode: {} },
        },
        acc: new Acc(),
      };
      byClient.set(c.client, b);
    } else if (namesLater(c.dateMs, c.docId, b.row)) {
      Object.assign(b.row, { clientName: c.clientName, clientKind: c.clientKind, nameAt: c.dateMs, nameDocId: c.docId });
    }
    b.acc.add(c, true);
    const counts = b.row.findingCounts;
    const scope = basis === 'invoice' ? 'invoice' : `payment|${month}`;
    r.findings.forEach((f, n) => {
      counts.total += 1;
      counts.byKind[f.kind] += 1;
      counts.byCode[f.code] = (counts.byCode[f.code] ?? 0) + 1;
      findings.push({
        _id: `${tenant}|${scope}|${f.docId}|${n}`,
        tenant,
        ...(basis === 'invoice' ? { basis, day: key } : { basis: 'payment' as const, day: month, bucket: key }),
        dateMs: r.date,
        client: r.client,
        kind: f.kind,
        docId: f.docId,
        n,
        conceptIndex: f.conceptIndex ?? null,
        code: f.code,
      });
    });
  }
  return {
    rollup: { _id: taxRollupId(tenant, basis, key), tenant, basis, day: key, month, fingerprint: taxRollupFingerprint(settings), rows: sortedRows(byClient) },
    findings,
  };
}
