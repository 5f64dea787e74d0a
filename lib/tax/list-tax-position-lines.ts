/** GET /api/tax/position/lines: one figure's lines of a month's tax position, a page at a time. */
import type { ServiceContext } from '../context.ts';
import { mxMonthKey } from '../time/mexico-city.ts';
import { fromCents } from '../money/cents.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';
import { lineView, type TaxPositionLineView } from './get-tax-position.ts';
import { monthRows } from './tax-position-month.ts';
import { positionFigures, type PositionFigure } from './tax-position.ts';

export interface TaxPositionLinesPage {
  tenant: string;
  month: string;
  basis: 'cash';
  figure: PositionFigure;
  amount: number;
  meta: { total: number; page: number; limit: number; pages: number; hasMore: boolean };
  data: TaxPositionLineView[];
}

export async function listTaxPositionLines(
  ctx: ServiceContext,
  tenant: string,
  input: { month?: string; figure: PositionFigure; page: number; limit: number },
): Promise<TaxPositionLinesPage> {
  const month = input.month ?? mxMonthKey(ctx.now().getTime());
  const rows = await monthRows(ctx, tenant, month);
  const f = positionFigures(rows.collections, rows.payments, rows.previousPayments);
  const all = f.lines[input.figure];
  const skip = (input.page - 1) * input.limit;
  return {
    tenant,
    month,
    basis: 'cash',
    figure: input.figure,
    amount: fromCents(f.totalsC[input.figure]),
    meta: { total: all.length, page: input.page, limit: input.limit, pages: Math.ceil(all.length / input.limit), hasMore: skip + input.limit < all.length },
    data: all.slice(skip, skip + input.limit).map(lineView),
  };
}

export type TaxPositionLinesPageCheck = Conforms<TaxPositionLinesPage, components['schemas']['TaxPositionLinesPage']>;
