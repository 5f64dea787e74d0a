/**
 * The tax position's totals kept on write (docs/rollups.md, "Tax position and DIOT"), pure: one
 * month of a tenant computed from its rows (tax-position-month.ts) into what is kept — the
 * month's figures in integer cents with their line counts and the warnings' counts, and every
 * line of every figure and every DIOT row in the order the answers list them (`rank`), so a
 * page is an indexed range read. The previous month's retention credit is not kept: it is that
 * month's `vatRetainedByCarrier` (the same lines, the same order).
 */
import { diotRows, type DiotRow } from './diot.ts';
import { positionFigures, POSITION_FIGURES, type CollectionLine, type FigureLine, type PaymentLine, type PositionFigure } from './tax-position.ts';

/** Bump when what a month holds or how it is computed changes: months kept by another version are recomputed when read. */
export const TAX_POSITION_ROLLUP_VERSION = 1;

/** The figures a month keeps: all but the retention credit, which is the previous month's vatRetainedByCarrier. */
export const KEPT_FIGURES = POSITION_FIGURES.filter((f): f is Exclude<PositionFigure, 'retentionCredit'> => f !== 'retentionCredit');
export type KeptFigure = (typeof KEPT_FIGURES)[number];

/** Where a figure's lines are kept: the retention credit of a month reads the month before's IVA retained by the carrier. */
export function keptSource(figure: PositionFigure, month: string, previousMonth: string): { month: string; figure: KeptFigure } {
  return figure === 'retentionCredit' ? { month: previousMonth, figure: 'vatRetainedByCarrier' } : { month, figure };
}

/** One month of a tenant (`taxPositionMonths`). Absent: nothing in the month. */
export interface TaxPositionMonthRollup {
  /** `${tenant}|${month}`. */
  _id: string;
  tenant: string;
  month: string;
  version: number;
  totalsC: Record<KeptFigure, number>;
  lineCounts: Record<KeptFigure, number>;
  /** The non-creditable lines by code, in the order the codes first appear in the figure's lines. */
  warningsByCode: { code: string; count: number }[];
  diotRows: number;
}

/** One line of a figure, or one DIOT row, of a month (`taxPositionLines`), at its place in the answer's order. */
export interface TaxPositionLineEntry {
  /** `${tenant}|${month}|${figure}|${rank}`. */
  _id: string;
  tenant: string;
  month: string;
  figure: KeptFigure | 'diot';
  rank: number;
  line?: FigureLine;
  row?: DiotRow;
}

export const taxPositionMonthId = (tenant: string, month: string): string => `${tenant}|${month}`;
const entryId = (tenant: string, month: string, figure: string, rank: number): string => `${tenant}|${month}|${figure}|${rank}`;

export interface KeptMonth {
  month: TaxPositionMonthRollup | null;
  entries: TaxPositionLineEntry[];
}

/** A month's kept form from its collections and payments (the rows of that month only). */
export function rollUpTaxPositionMonth(tenant: string, month: string, collections: readonly CollectionLine[], payments: readonly PaymentLine[]): KeptMonth {
  const f = positionFigures(collections, payments, []);
  const rows = diotRows(payments);
  const entries: TaxPositionLineEntry[] = [];
  const totalsC = {} as Record<KeptFigure, number>;
  const lineCounts = {} as Record<KeptFigure, number>;
  for (const figure of KEPT_FIGURES) {
    totalsC[figure] = f.totalsC[figure];
    lineCounts[figure] = f.lines[figure].length;
    f.lines[figure].forEach((line, rank) => entries.push({ _id: entryId(tenant, month, figure, rank), tenant, month, figure, rank, line }));
  }
  rows.forEach((row, rank) => entries.push({ _id: entryId(tenant, month, 'diot', rank), tenant, month, figure: 'diot', rank, row }));
  if (!entries.length) return { month: null, entries };
  const byCode = new Map<string, number>();
  for (const w of f.lines.nonCreditableVat) byCode.set(w.reason!, (byCode.get(w.reason!) ?? 0) + 1);
  return {
    month: {
      _id: taxPositionMonthId(tenant, month),
      tenant,
      month,
      version: TAX_POSITION_ROLLUP_VERSION,
      totalsC,
      lineCounts,
      warningsByCode: [...byCode].map(([code, count]) => ({ code, count })),
      diotRows: rows.length,
    },
    entries,
  };
}

/** The empty month (nothing kept): every figure 0 with no lines. */
export function emptyTaxPositionMonth(tenant: string, month: string): TaxPositionMonthRollup {
  const zero = Object.fromEntries(KEPT_FIGURES.map((f) => [f, 0])) as Record<KeptFigure, number>;
  return {
    _id: taxPositionMonthId(tenant, month),
    tenant,
    month,
    version: TAX_POSITION_ROLLUP_VERSION,
    totalsC: zero,
    lineCounts: { ...zero },
    warningsByCode: [],
    diotRows: 0,
  };
}
