/**
 * The tax position, its lines and the DIOT read from the months kept on write
 * (tax-position-rollup-kind.ts): the month's figures from its kept document, the retention credit
 * from the month before's, and only the lines asked for (ranges of ranks of the days they lie on). The same answers as
 * computing from the documents (test/tax-position-rollups-differential.test.ts).
 */
import type { ServiceContext } from '../context.ts';
import type { DiotRow } from './diot.ts';
import { readFreshTaxPositionMonths } from './tax-position-rollup-kind.ts';
import { emptyTaxPositionMonth, keptSource, rankRanges, type TaxPositionMonthRollup } from './tax-position-rollup.ts';
import { readTaxPositionLines } from './tax-position-rollups-repo.ts';
import { POSITION_FIGURES, type FigureLine, type PositionFigure } from './tax-position.ts';

/** What the answers show of a month's figures: totals, counts, and the lines asked for. */
export interface PositionFiguresView {
  totalsC: Record<PositionFigure, number>;
  lineCounts: Record<PositionFigure, number>;
  warningsByCode: Record<string, number>;
}

async function freshMonths(
  ctx: ServiceContext,
  tenant: string,
  month: string,
  previousMonth: string,
): Promise<{ cur: TaxPositionMonthRollup; prev: TaxPositionMonthRollup }> {
  const kept = await readFreshTaxPositionMonths(ctx.db, tenant, [previousMonth, month], ctx.config.queryTimeoutMs);
  return { cur: kept.get(month) ?? emptyTaxPositionMonth(tenant, month), prev: kept.get(previousMonth) ?? emptyTaxPositionMonth(tenant, previousMonth) };
}

function figuresView(cur: TaxPositionMonthRollup, prev: TaxPositionMonthRollup, month: string, previousMonth: string): PositionFiguresView {
  const totalsC = {} as Record<PositionFigure, number>;
  const lineCounts = {} as Record<PositionFigure, number>;
  for (const figure of POSITION_FIGURES) {
    const src = keptSource(figure, month, previousMonth);
    const kept = src.month === month ? cur : prev;
    totalsC[figure] = kept.totalsC[src.figure];
    lineCounts[figure] = kept.lineCounts[src.figure];
  }
  const warningsByCode: Record<string, number> = {};
  for (const w of cur.warningsByCode) warningsByCode[w.code] = w.count;
  return { totalsC, lineCounts, warningsByCode };
}

/** Ranks [skip, skip + limit) of a figure: its month's days' ranges (rankRanges), read at once. */
async function linesOf(
  ctx: ServiceContext,
  tenant: string,
  months: { cur: TaxPositionMonthRollup; prev: TaxPositionMonthRollup },
  month: string,
  previousMonth: string,
  figure: PositionFigure,
  skip: number,
  limit: number,
): Promise<FigureLine[]> {
  const src = keptSource(figure, month, previousMonth);
  const kept = src.month === month ? months.cur : months.prev;
  const ranges = rankRanges(kept.dayCounts[src.figure], skip, skip + limit);
  const read = await Promise.all(ranges.map((r) => readTaxPositionLines(ctx.db, tenant, r.day, src.figure, r.from, r.to, ctx.config.queryTimeoutMs)));
  return read.flat().map((e) => e.line!);
}

/** The month's figures and each figure's first `limit` lines. */
export async function keptPosition(
  ctx: ServiceContext,
  tenant: string,
  month: string,
  previousMonth: string,
  limit: number,
): Promise<PositionFiguresView & { firstLines: Record<PositionFigure, FigureLine[]> }> {
  const months = await freshMonths(ctx, tenant, month, previousMonth);
  const view = figuresView(months.cur, months.prev, month, previousMonth);
  // Indexed range reads per figure with lines, at once.
  const read = await Promise.all(
    POSITION_FIGURES.map((figure) =>
      view.lineCounts[figure] && limit ? linesOf(ctx, tenant, months, month, previousMonth, figure, 0, limit) : Promise.resolve([]),
    ),
  );
  const firstLines = Object.fromEntries(POSITION_FIGURES.map((figure, i) => [figure, read[i]!])) as Record<PositionFigure, FigureLine[]>;
  return { ...view, firstLines };
}

/** One figure's total, line count and the lines of ranks [skip, skip + limit). */
export async function keptFigurePage(
  ctx: ServiceContext,
  tenant: string,
  month: string,
  previousMonth: string,
  figure: PositionFigure,
  skip: number,
  limit: number,
): Promise<{ totalC: number; count: number; lines: FigureLine[] }> {
  const months = await freshMonths(ctx, tenant, month, previousMonth);
  const view = figuresView(months.cur, months.prev, month, previousMonth);
  const count = view.lineCounts[figure];
  return { totalC: view.totalsC[figure], count, lines: skip < count ? await linesOf(ctx, tenant, months, month, previousMonth, figure, skip, limit) : [] };
}

/** The month's DIOT rows, in order. */
export async function keptDiotRows(ctx: ServiceContext, tenant: string, month: string): Promise<DiotRow[]> {
  const kept = (await readFreshTaxPositionMonths(ctx.db, tenant, [month], ctx.config.queryTimeoutMs)).get(month);
  if (!kept?.diotRows) return [];
  const entries = await readTaxPositionLines(ctx.db, tenant, month, 'diot', 0, kept.diotRows, ctx.config.queryTimeoutMs);
  return entries.map((e) => e.row!);
}
