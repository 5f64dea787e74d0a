/**
 * A day's tax totals as kept on write (docs/rollups.md): the invoice-basis contributions of every
 * document emitted that Mexico City day, summed per client, with the findings counted, and the
 * findings themselves for the index the summary lists from. A summary of any period adds the
 * days' rows (TaxTotalsAccumulator.addDayRow) instead of reconciling every document again;
 * the figures are the same because both fold the same contributions (reconcileDocument,
 * invoiceBasisContribution). Pure.
 */
import type { FinancialDocument } from '../model/financial-document.ts';
import { Acc, invoiceBasisContribution, type TaxAccState } from './tax-totals.ts';
import { reconcileDocument, type FindingCode, type FindingKind, type ReconcileSettings } from './reconcile.ts';
import type { TaxpayerKind } from './rfc.ts';

/**
 * Bumped whenever what a day's totals hold or how a document is reconciled changes: stored days
 * of another version are recomputed, like days kept under other settings.
 */
export const TAX_ROLLUP_VERSION = 1;

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

export interface TaxDayRollup {
  /** `${tenant}|invoice|${day}`. */
  _id: string;
  tenant: string;
  basis: 'invoice';
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
  /** `${tenant}|${docId}|${n}`: the n-th finding of the document's reconciliation. */
  _id: string;
  tenant: string;
  day: string;
  dateMs: number;
  client: string;
  kind: FindingKind;
  docId: string;
  n: number;
  conceptIndex: number | null;
  code: FindingCode;
}

export const taxRollupId = (tenant: string, day: string): string => `${tenant}|invoice|${day}`;

interface RowBuilder {
  row: Omit<TaxDayRow, 'acc'>;
  acc: Acc;
}

/** The totals and findings of one tenant's day from the documents emitted that day. */
export function rollUpTaxDay(
  tenant: string,
  day: string,
  docs: readonly FinancialDocument[],
  settings: ReconcileSettings,
): { rollup: TaxDayRollup; findings: IndexedFinding[] } {
  const byClient = new Map<string, RowBuilder>();
  const findings: IndexedFinding[] = [];
  let month = day.slice(0, 7);
  for (const doc of docs) {
    const r = reconcileDocument(doc, settings);
    const c = invoiceBasisContribution(doc, r);
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
    } else if (c.dateMs > b.row.nameAt || (c.dateMs === b.row.nameAt && c.docId > b.row.nameDocId)) {
      Object.assign(b.row, { clientName: c.clientName, clientKind: c.clientKind, nameAt: c.dateMs, nameDocId: c.docId });
    }
    b.acc.add(c, true);
    const counts = b.row.findingCounts;
    r.findings.forEach((f, n) => {
      counts.total += 1;
      counts.byKind[f.kind] += 1;
      counts.byCode[f.code] = (counts.byCode[f.code] ?? 0) + 1;
      findings.push({
        _id: `${tenant}|${f.docId}|${n}`,
        tenant,
        day,
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
  const rows = [...byClient.values()].map((b) => ({ ...b.row, acc: b.acc.state() })).sort((a, b) => (a.client < b.client ? -1 : a.client > b.client ? 1 : 0));
  return {
    rollup: { _id: taxRollupId(tenant, day), tenant, basis: 'invoice', day, month, fingerprint: taxRollupFingerprint(settings), rows },
    findings,
  };
}
