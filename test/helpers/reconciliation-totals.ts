/**
 * Reference totals for the tests (docs/domain.md "Tax reconciliation"): per-document
 * results grouped by a key (month, client) and summed in integer cents;
 * cancelled documents are counted apart and excluded from every sum.
 * The service sums with TaxTotalsAccumulator (lib/tax/tax-totals.ts);
 * test/unit/tax-totals.test.ts checks it against this plain version.
 */
import { fromCents, toCents } from '../../lib/money/cents.ts';
import type { Reconciliation } from '../../lib/tax/reconcile.ts';

export interface ReconciliationTotals {
  key: string;
  /** Non-cancelled documents, the only ones summed. */
  documents: number;
  cancelledDocuments: number;
  /** Σ Total of cancelled documents, for information only. */
  cancelledTotal: number;
  subtotal: number;
  discount: number;
  taxableBase: number;
  freightBase: number;
  exemptAmount: number;
  vatDeclared: number;
  vatExpected: number;
  /** vatDeclared − vatExpected. */
  vatDifference: number;
  retentionDeclared: number;
  retentionExpected: number;
  retentionDifference: number;
  total: number;
  discrepancies: number;
  warnings: number;
  infos: number;
  documentsWithDiscrepancies: number;
}

const SUMMED = [
  'subtotal',
  'discount',
  'taxableBase',
  'freightBase',
  'exemptAmount',
  'vatDeclared',
  'vatExpected',
  'retentionDeclared',
  'retentionExpected',
  'total',
] as const;
type SummedField = (typeof SUMMED)[number];

/** Group results by `keyFn` and sum in cents; cancelled documents are counted apart and excluded from every sum. Sorted by key. */
export function aggregateReconciliations(results: readonly Reconciliation[], keyFn: (r: Reconciliation) => string): ReconciliationTotals[] {
  interface Acc {
    cents: Record<SummedField, number>;
    cancelledC: number;
    documents: number;
    cancelled: number;
    d: number;
    w: number;
    i: number;
    withD: number;
  }
  const groups = new Map<string, Acc>();
  for (const r of results) {
    const key = keyFn(r);
    let acc = groups.get(key);
    if (!acc) {
      const cents = Object.fromEntries(SUMMED.map((f) => [f, 0])) as Record<SummedField, number>;
      acc = { cents, cancelledC: 0, documents: 0, cancelled: 0, d: 0, w: 0, i: 0, withD: 0 };
      groups.set(key, acc);
    }
    if (r.cancelled) {
      acc.cancelled += 1;
      acc.cancelledC += toCents(r.total);
      continue;
    }
    acc.documents += 1;
    for (const f of SUMMED) acc.cents[f] += toCents(r[f]);
    for (const f of r.findings) {
      if (f.kind === 'discrepancy') acc.d += 1;
      else if (f.kind === 'warning') acc.w += 1;
      else acc.i += 1;
    }
    if (r.hasDiscrepancy) acc.withD += 1;
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, a]) => ({
      key,
      documents: a.documents,
      cancelledDocuments: a.cancelled,
      cancelledTotal: fromCents(a.cancelledC),
      subtotal: fromCents(a.cents.subtotal),
      discount: fromCents(a.cents.discount),
      taxableBase: fromCents(a.cents.taxableBase),
      freightBase: fromCents(a.cents.freightBase),
      exemptAmount: fromCents(a.cents.exemptAmount),
      vatDeclared: fromCents(a.cents.vatDeclared),
      vatExpected: fromCents(a.cents.vatExpected),
      vatDifference: fromCents(a.cents.vatDeclared - a.cents.vatExpected),
      retentionDeclared: fromCents(a.cents.retentionDeclared),
      retentionExpected: fromCents(a.cents.retentionExpected),
      retentionDifference: fromCents(a.cents.retentionDeclared - a.cents.retentionExpected),
      total: fromCents(a.cents.total),
      discrepancies: a.d,
      warnings: a.w,
      infos: a.i,
      documentsWithDiscrepancies: a.withD,
    }));
}

/** Group by Mexico City month of the invoice date (the default "month by invoice date"). */
export const byMonth = (r: Reconciliation): string => r.month;
export const byClient = (r: Reconciliation): string => r.client;
