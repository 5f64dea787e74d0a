/** GET /api/tax/position/lines: one figure's lines of a month's tax position, a page at a time. */
import type { ServiceContext } from '../context.ts';
import { mxMonthKey } from '../time/mexico-city.ts';
import { fromCents } from '../money/cents.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';
import { lineView, type TaxPositionLineView } from './get-tax-position.ts';
import { monthRange, monthRows } from './tax-position-month.ts';
import { positionFigures, type FigureLine, type PositionFigure } from './tax-position.ts';
import { keptFigurePage } from './kept-tax-position.ts';
import { taxPositionRollups } from './tax-position-rollup-kind.ts';

export interface TaxPositionLinesPage {
  tenant: string;
  month: string;
  basis: 'cash';
  figure: PositionFigure;
  amount: number;
  meta: { total: number; page: number; limit: number; pages: number; hasMore: boolean };
  data: TaxPositionLineView[];
}

/** From the months kept on write when the store holds them; `fromDocuments`: from the month's documents. */
export async function listTaxPositionLines(
  ctx: ServiceContext,
  tenant: string,
  input: { month?: string; figure: PositionFigure; page: number; limit: number },
  opts: { fromDocuments?: boolean } = {},
): Promise<TaxPositionLinesPage> {
  const month = input.month ?? mxMonthKey(ctx.now().getTime());
  const skip = (input.page - 1) * input.limit;
  let page: { totalC: number; count: number; lines: FigureLine[] };
  if (!opts.fromDocuments && (await taxPositionRollups.ready(ctx.db))) {
    page = await keptFigurePage(ctx, tenant, month, mxMonthKey(monthRange(month).start - 1), input.figure, skip, input.limit);
  } else {
    const rows = await monthRows(ctx, tenant, month);
    const f = positionFigures(rows.collections, rows.payments, rows.previousPayments);
    const all = f.lines[input.figure];
    page = { totalC: f.totalsC[input.figure], count: all.length, lines: all.slice(skip, skip + input.limit) };
  }
  return {
    tenant,
    month,
    basis: 'cash',
    figure: input.figure,
    amount: fromCents(page.totalC),
    meta: { total: page.count, page: input.page, limit: input.limit, pages: Math.ceil(page.count / input.limit), hasMore: skip + input.limit < page.count },
    data: page.lines.map(lineView),
  };
}

export type TaxPositionLinesPageCheck = Conforms<TaxPositionLinesPage, components['schemas']['TaxPositionLinesPage']>;
