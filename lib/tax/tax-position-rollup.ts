/**
 * The tax position's totals kept on write (docs/rollups.md, "Tax position and DIOT"), pure.
 *
 * A month is kept in days, so a write recomputes only the days it marked: each line of a figure
 * lies on the day of its date (an issued invoice's last collection in the month, its credit
 * note's, a received CFDI's settlement), and a day keeps its lines in the answers' order (`rank` within the day),
 * its figures in integer cents with their line counts, the warnings' counts, and its share of
 * every DIOT row. A line's date is always a day of its document, and a write marks every day of
 * the documents it changes, so the days it marks hold every line it moves. The month adds up its
 * days: the figures, the count of lines on each day (a page of a figure is found by them, then
 * read as ranges of ranks), the warnings, and its DIOT rows, kept in order. A month's retention
 * credit is not kept as such: it is the previous month's `creditableRetention` lines (its creditable
 * expenses' retentions), kept beside its figures.
 */
import { diotPartials, diotRowsOf, mergeDiotPartials, type DiotPartial, type DiotRow } from './diot.ts';
import {
  creditableRetentionLines,
  positionFigures,
  POSITION_FIGURES,
  type CollectionLine,
  type FigureLine,
  type PaymentLine,
  type PositionFigure,
} from './tax-position.ts';

/**
 * Bump when what a day or a month holds or how it is computed changes: a store kept by another version is rebuilt (10: a
 * foreign-currency invoice's collections are converted at the rate of the part of its payments that counts, an
 * overpayment weighing nothing; 11: a line says whether its CFDI retains ISR at a fee's rate, not at any rate; 12: a
 * supplier's note returns its own value before its taxes; 13: a supplier's note on a cancelled CFDI is that CFDI's, which the
 * DIOT leaves out).
 */
export const TAX_POSITION_ROLLUP_VERSION = 13;

/**
 * The figures a month keeps: all but the retention credit, and the retentions of the month's creditable expenses
 * (`creditableRetention`, no figure of its own): the next month's retention credit is those lines.
 */
export const KEPT_FIGURES = [
  ...POSITION_FIGURES.filter((f): f is Exclude<PositionFigure, 'retentionCredit'> => f !== 'retentionCredit'),
  'creditableRetention',
] as const;
export type KeptFigure = (typeof KEPT_FIGURES)[number];

/** Where a figure's lines are kept: the retention credit of a month reads the month before's creditable retentions. */
export function keptSource(figure: PositionFigure, month: string, previousMonth: string): { month: string; figure: KeptFigure } {
  return figure === 'retentionCredit' ? { month: previousMonth, figure: 'creditableRetention' } : { month, figure };
}

/** What a day and a month both hold. */
interface KeptFigures {
  totalsC: Record<KeptFigure, number>;
  lineCounts: Record<KeptFigure, number>;
  /** The non-creditable lines by code, in the order the codes first appear in the figure's lines. */
  warningsByCode: { code: string; count: number }[];
}

/** One Mexico City day of a tenant (`taxPositionDays`). Absent: no line on it. */
export interface TaxPositionDayRollup extends KeptFigures {
  /** `${tenant}|${day}`. */
  _id: string;
  tenant: string;
  day: string;
  month: string;
  version: number;
  /** The day's share of the month's DIOT rows (the rows its lines add to). */
  diot: DiotPartial[];
}

/** One month of a tenant (`taxPositionMonths`), its days added up. Absent: nothing in the month. */
export interface TaxPositionMonthRollup extends KeptFigures {
  /** `${tenant}|${month}`. */
  _id: string;
  tenant: string;
  month: string;
  version: number;
  /** Per figure, its days with lines and how many, in order: where a rank of the month lies. */
  dayCounts: Record<KeptFigure, { day: string; count: number }[]>;
  diotRows: number;
}

/**
 * One line of a figure on a day, or one DIOT row of a month (`taxPositionLines`), at its place in
 * the answer's order: `bucket` is the day ('YYYY-MM-DD') of a figure's line, the month ('YYYY-MM')
 * of a DIOT row.
 */
export interface TaxPositionLineEntry {
  /** `${tenant}|${bucket}|${figure}|${rank}`. */
  _id: string;
  tenant: string;
  bucket: string;
  figure: KeptFigure | 'diot';
  rank: number;
  line?: FigureLine;
  row?: DiotRow;
}

export const taxPositionMonthId = (tenant: string, month: string): string => `${tenant}|${month}`;
export const taxPositionDayId = (tenant: string, day: string): string => `${tenant}|${day}`;
const entryId = (tenant: string, bucket: string, figure: string, rank: number): string => `${tenant}|${bucket}|${figure}|${rank}`;

export interface KeptDay {
  day: TaxPositionDayRollup | null;
  entries: TaxPositionLineEntry[];
}

export interface KeptMonth {
  month: TaxPositionMonthRollup | null;
  /** The DIOT rows. */
  entries: TaxPositionLineEntry[];
}

const zeroFigures = (): Record<KeptFigure, number> => Object.fromEntries(KEPT_FIGURES.map((f) => [f, 0])) as Record<KeptFigure, number>;

/**
 * A day's kept form from its lines: the collections and payments dated on it, and of the
 * payments, those that count their document in its DIOT row (documentCountingLines).
 */
export function rollUpTaxPositionDay(
  tenant: string,
  day: string,
  collections: readonly CollectionLine[],
  payments: readonly PaymentLine[],
  countsDocument: (l: PaymentLine) => boolean,
): KeptDay {
  const f = positionFigures(collections, payments, []);
  const kept: Record<KeptFigure, FigureLine[]> = { ...f.lines, creditableRetention: creditableRetentionLines(payments) };
  const entries: TaxPositionLineEntry[] = [];
  const totalsC = zeroFigures();
  const lineCounts = zeroFigures();
  for (const figure of KEPT_FIGURES) {
    totalsC[figure] = kept[figure].reduce((sum, l) => sum + l.amountC, 0);
    lineCounts[figure] = kept[figure].length;
    kept[figure].forEach((line, rank) => entries.push({ _id: entryId(tenant, day, figure, rank), tenant, bucket: day, figure, rank, line }));
  }
  const diot = [...diotPartials(payments, countsDocument).values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  if (!entries.length && !diot.length) return { day: null, entries };
  const byCode = new Map<string, number>();
  for (const w of f.lines.nonCreditableVat) byCode.set(w.reason!, (byCode.get(w.reason!) ?? 0) + 1);
  return {
    day: {
      _id: taxPositionDayId(tenant, day),
      tenant,
      day,
      month: day.slice(0, 7),
      version: TAX_POSITION_ROLLUP_VERSION,
      totalsC,
      lineCounts,
      warningsByCode: [...byCode].map(([code, count]) => ({ code, count })),
      diot,
    },
    entries,
  };
}

/** A month's kept form from its kept days (any order): their figures added up, its DIOT rows from their shares. */
export function rollUpTaxPositionMonth(tenant: string, month: string, days: readonly TaxPositionDayRollup[]): KeptMonth {
  const sorted = [...days].sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
  if (!sorted.length) return { month: null, entries: [] };
  const totalsC = zeroFigures();
  const lineCounts = zeroFigures();
  const dayCounts = Object.fromEntries(KEPT_FIGURES.map((f) => [f, [] as { day: string; count: number }[]])) as TaxPositionMonthRollup['dayCounts'];
  const byCode = new Map<string, number>();
  for (const d of sorted) {
    for (const figure of KEPT_FIGURES) {
      totalsC[figure] += d.totalsC[figure];
      lineCounts[figure] += d.lineCounts[figure];
      if (d.lineCounts[figure]) dayCounts[figure].push({ day: d.day, count: d.lineCounts[figure] });
    }
    // Days in order, each day's codes in its order: the order the codes first appear in the month's lines.
    for (const w of d.warningsByCode) byCode.set(w.code, (byCode.get(w.code) ?? 0) + w.count);
  }
  const rows = diotRowsOf(mergeDiotPartials(sorted.flatMap((d) => d.diot)));
  return {
    month: {
      _id: taxPositionMonthId(tenant, month),
      tenant,
      month,
      version: TAX_POSITION_ROLLUP_VERSION,
      totalsC,
      lineCounts,
      warningsByCode: [...byCode].map(([code, count]) => ({ code, count })),
      dayCounts,
      diotRows: rows.length,
    },
    entries: rows.map((row, rank) => ({ _id: entryId(tenant, month, 'diot', rank), tenant, bucket: month, figure: 'diot', rank, row })),
  };
}

/** The empty month (nothing kept): every figure 0 with no lines. */
export function emptyTaxPositionMonth(tenant: string, month: string): TaxPositionMonthRollup {
  return rollUpTaxPositionMonth(tenant, month, [
    {
      _id: taxPositionDayId(tenant, `${month}-01`),
      tenant,
      day: `${month}-01`,
      month,
      version: TAX_POSITION_ROLLUP_VERSION,
      totalsC: zeroFigures(),
      lineCounts: zeroFigures(),
      warningsByCode: [],
      diot: [],
    },
  ]).month!;
}

/**
 * Where ranks [from, to) of a figure of a month lie: per day, the ranks within it, in order
 * (a page is read as these ranges).
 */
export function rankRanges(dayCounts: readonly { day: string; count: number }[], from: number, to: number): { day: string; from: number; to: number }[] {
  const out: { day: string; from: number; to: number }[] = [];
  let start = 0;
  for (const { day, count } of dayCounts) {
    const end = start + count;
    if (end > from && start < to) out.push({ day, from: Math.max(0, from - start), to: Math.min(count, to - start) });
    if (end >= to) break;
    start = end;
  }
  return out;
}
