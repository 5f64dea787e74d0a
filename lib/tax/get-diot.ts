/**
 * GET /api/tax/diot: the month's DIOT rows (diot.ts, pure) from the received CFDIs paid in it, as
 * JSON or CSV. docs/domain.md "DIOT" says which layout the file follows and why.
 */
import type { ServiceContext } from '../context.ts';
import { mxMonthKey } from '../time/mexico-city.ts';
import { fromCents, toCents } from '../money/cents.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';
import { diotCsv, diotRows, foreignSupplierKey, type DiotRow } from './diot.ts';
import { monthRows } from './tax-position-month.ts';
import { keptDiotRows } from './kept-tax-position.ts';
import { taxPositionRollups } from './tax-position-rollup-kind.ts';

export const DIOT_LAYOUT =
  "CSV with the DIOT's data per supplier (columns of DIOT_CSV_COLUMNS). Not the SAT's 2025 batch text file (54 pipe-separated fields): the position of each field of its non-creditable VAT and other-data sections could not be established from a published source, so the file is not produced.";

export interface Diot {
  tenant: string;
  month: string;
  basis: 'cash';
  layout: string;
  rows: DiotRow[];
  totals: { suppliers: number; paid: number; vatCreditable: number; vatNonCreditable: number; vatRetained: number; returnsAndDiscounts: number };
}

const sum = (rows: readonly DiotRow[], pick: (r: DiotRow) => number): number => fromCents(rows.reduce((s, r) => s + toCents(pick(r)), 0));

/**
 * The totals of the rows (sums of their rounded figures, in cents). A supplier is its RFC, a foreign one (no RFC) its
 * name's foreignSupplierKey: one supplier with rows of two types of operation counts once, whatever name each shows.
 */
export function diotTotals(rows: readonly DiotRow[]): Diot['totals'] {
  return {
    suppliers: new Set(rows.map((r) => r.rfc ?? `|${foreignSupplierKey(r.name)}`)).size,
    paid: sum(rows, (r) => r.paid.rate16 + r.paid.rate8 + r.paid.rate0 + r.paid.exempt + r.paid.imports),
    vatCreditable: sum(rows, (r) => r.vat.creditable),
    vatNonCreditable: sum(rows, (r) => r.vat.nonCreditable),
    vatRetained: sum(rows, (r) => r.vatRetained),
    returnsAndDiscounts: sum(rows, (r) => r.returnsAndDiscounts),
  };
}

/** From the month kept on write when the store holds it (docs/rollups.md); `fromDocuments`: from the month's received CFDIs. */
export async function getDiot(ctx: ServiceContext, tenant: string, input: { month?: string }, opts: { fromDocuments?: boolean } = {}): Promise<Diot> {
  const month = input.month ?? mxMonthKey(ctx.now().getTime());
  const rows =
    !opts.fromDocuments && (await taxPositionRollups.ready(ctx.db))
      ? await keptDiotRows(ctx, tenant, month)
      : diotRows((await monthRows(ctx, tenant, month)).payments);
  return { tenant, month, basis: 'cash', layout: DIOT_LAYOUT, rows, totals: diotTotals(rows) };
}

export const diotFile = (diot: Diot): string => diotCsv(diot.rows);

export type DiotCheck = Conforms<Diot, components['schemas']['Diot']>;
