/**
 * GET /api/tax/diot: the month's DIOT rows (diot.ts, pure) from the received CFDIs paid in it, as
 * JSON or CSV. docs/domain.md "DIOT" says which layout the file follows and why.
 */
import type { ServiceContext } from '../context.ts';
import { mxMonthKey } from '../time/mexico-city.ts';
import { fromCents, toCents } from '../money/cents.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';
import { diotCsv, diotRows, type DiotRow } from './diot.ts';
import { monthRows } from './tax-position-month.ts';

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

export async function getDiot(ctx: ServiceContext, tenant: string, input: { month?: string }): Promise<Diot> {
  const month = input.month ?? mxMonthKey(ctx.now().getTime());
  const rows = diotRows((await monthRows(ctx, tenant, month)).payments);
  return {
    tenant,
    month,
    basis: 'cash',
    layout: DIOT_LAYOUT,
    rows,
    totals: {
      suppliers: new Set(rows.map((r) => `${r.rfc}|${r.name}`)).size,
      paid: sum(rows, (r) => r.paid.rate16 + r.paid.rate8 + r.paid.rate0 + r.paid.exempt + r.paid.imports),
      vatCreditable: sum(rows, (r) => r.vat.creditable),
      vatNonCreditable: sum(rows, (r) => r.vat.nonCreditable),
      vatRetained: sum(rows, (r) => r.vatRetained),
      returnsAndDiscounts: sum(rows, (r) => r.returnsAndDiscounts),
    },
  };
}

export const diotFile = (diot: Diot): string => diotCsv(diot.rows);

export type DiotCheck = Conforms<Diot, components['schemas']['Diot']>;
