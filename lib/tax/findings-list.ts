/**
 * The findings of a tax summary: every finding is counted (by kind and by
 * code), only the first `limit` are listed. Listing order: discrepancies, then
 * warnings, then informational findings; within a kind by invoice date,
 * document id and concept index. Memory stays bounded by the limit whatever
 * the number of documents (lists are trimmed as they grow).
 */
import type { Finding, FindingCode, FindingKind, Reconciliation } from './reconcile.ts';

export interface ListedFinding {
  kind: FindingKind;
  code: FindingCode;
  docId: string;
  uuid: string;
  client: string;
  /** Invoice emission instant (ISO 8601). */
  date: string;
  /** Month (YYYY-MM) the document is reported in. */
  month: string;
  conceptIndex: number | null;
  /** Currency of declared/expected/difference: the document's (CFDI Moneda). */
  currency: string;
  declared: number;
  expected: number;
  difference: number;
  message: string;
}

export interface FindingsReport {
  total: number;
  byKind: Record<FindingKind, number>;
  byCode: Partial<Record<FindingCode, number>>;
  /** The kind listed when the request filtered on one, else null (all kinds). */
  kind: FindingKind | null;
  limit: number;
  listed: number;
  items: ListedFinding[];
}

/** Listing order of the kinds. */
export const FINDING_KIND_ORDER: readonly FindingKind[] = ['discrepancy', 'warning', 'info'];

interface Entry {
  dateMs: number;
  item: ListedFinding;
}

const byDate = (a: Entry, b: Entry): number =>
  a.dateMs - b.dateMs ||
  (a.item.docId < b.item.docId ? -1 : a.item.docId > b.item.docId ? 1 : 0) ||
  (a.item.conceptIndex ?? -1) - (b.item.conceptIndex ?? -1) ||
  (a.item.code < b.item.code ? -1 : a.item.code > b.item.code ? 1 : 0);

/** A finding as the summary lists it. */
export function listedFinding(r: Reconciliation, f: Finding, month: string): ListedFinding {
  return {
    kind: f.kind,
    code: f.code,
    docId: f.docId,
    uuid: f.uuid,
    client: r.client,
    date: new Date(r.date).toISOString(),
    month,
    conceptIndex: f.conceptIndex ?? null,
    currency: r.currency,
    declared: f.declared,
    expected: f.expected,
    difference: f.difference,
    message: f.message,
  };
}

export class FindingsCollector {
  private total = 0;
  private readonly byKind: Record<FindingKind, number> = { discrepancy: 0, warning: 0, info: 0 };
  private readonly byCode = new Map<FindingCode, number>();
  private readonly lists: Record<FindingKind, Entry[]> = { discrepancy: [], warning: [], info: [] };

  constructor(
    private readonly limit: number,
    private readonly kind: FindingKind | null,
  ) {}

  /** Counts kept on write (a day's row): counted, not listed. */
  addCounts(c: { total: number; byKind: Record<FindingKind, number>; byCode: Partial<Record<FindingCode, number>> }): void {
    this.total += c.total;
    this.byKind.discrepancy += c.byKind.discrepancy;
    this.byKind.warning += c.byKind.warning;
    this.byKind.info += c.byKind.info;
    for (const [code, n] of Object.entries(c.byCode) as [FindingCode, number][]) this.byCode.set(code, (this.byCode.get(code) ?? 0) + n);
  }

  /** A finding read from the findings index (already counted by addCounts): listed, not counted. */
  addListed(item: ListedFinding, dateMs: number): void {
    if (this.kind !== null && item.kind !== this.kind) return;
    const list = this.lists[item.kind];
    list.push({ dateMs, item });
    if (list.length >= this.limit * 4 + 64) this.trim(list);
  }

  add(r: Reconciliation, month: string): void {
    for (const f of r.findings) this.addOne(r, f, month);
  }

  private addOne(r: Reconciliation, f: Finding, month: string): void {
    this.total += 1;
    this.byKind[f.kind] += 1;
    this.byCode.set(f.code, (this.byCode.get(f.code) ?? 0) + 1);
    if (this.kind !== null && f.kind !== this.kind) return;
    const list = this.lists[f.kind];
    list.push({ dateMs: r.date, item: listedFinding(r, f, month) });
    if (list.length >= this.limit * 4 + 64) this.trim(list);
  }

  private trim(list: Entry[]): void {
    list.sort(byDate);
    list.length = Math.min(list.length, this.limit);
  }

  report(): FindingsReport {
    const items: ListedFinding[] = [];
    for (const k of FINDING_KIND_ORDER) {
      const list = this.lists[k];
      this.trim(list);
      for (const e of list) if (items.length < this.limit) items.push(e.item);
    }
    const byCode = Object.fromEntries([...this.byCode.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) as Partial<Record<FindingCode, number>>;
    return { total: this.total, byKind: { ...this.byKind }, byCode, kind: this.kind, limit: this.limit, listed: items.length, items };
  }
}
