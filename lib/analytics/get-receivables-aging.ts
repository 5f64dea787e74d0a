/**
 * GET /api/receivables/aging (docs/domain.md "Receivables as of a date"): what each client owed
 * at the end of a day, by days past due. An invoice is open on day D when it was emitted by the
 * end of D, was not cancelled by then, and Total − valid payments and credit notes dated by then
 * is above zero (the same rule and query as the cash inflow forecast's receivables). Read from the
 * kept open-items index when it is built (docs/rollups.md "Receivables"), else from the documents.
 */
import type { ReportOptions } from '../shared/client-list.ts';
import type { ServiceContext } from '../context.ts';
import { getTracedSettings, type SettingSource } from '../settings/settings-source.ts';
import { rateOf } from '../money/currency.ts';
import { mxDateString } from '../time/mexico-city.ts';
import { asOfInstant } from '../shared/as-of-day.ts';
import { openInvoiceOf } from './forecast.ts';
import { AgingAccumulator, type Aging, type OpenReceivable } from './receivables-aging.ts';
import { keptFirstOpenNow, keptOpenSums, useKeptReceivables, type RankedOpen } from './kept-receivables.ts';
import { minOffsetDays } from './open-now.ts';
import { streamOpenInvoices } from './receivables-repo.ts';
import { asOfOut, type AsOfOut } from './report.ts';

export interface ReceivablesAgingInput {
  asOf?: string;
  client?: string;
  limit: number;
}

export interface ReceivablesAging extends Aging {
  tenant: string;
  computedAt: string;
  asOf: AsOfOut;
  filters: { client: string | null; asOf: string | null };
  parameters: {
    creditDays: { default: number; byClient: Record<string, number>; source: { default: SettingSource; byClient: SettingSource } };
    daysPastDue: string;
    amounts: string;
  };
}

/** The invoices open at `asOf` as the document query finds them (the reference the kept open items must equal). */
async function* documentReceivables(ctx: ServiceContext, tenant: string, asOf: number, client: string | undefined): AsyncIterable<OpenReceivable> {
  for await (const row of streamOpenInvoices(ctx.db, tenant, { asOf, ...(client ? { client } : {}) }, ctx.config.queryTimeoutMs)) {
    const open = openInvoiceOf(row);
    if (!open) continue;
    yield {
      id: row.id,
      uuid: row.invoice.uuid,
      client: row.client,
      clientName: row.clientName,
      invoiceDate: row.date,
      outstanding: open.outstanding,
      currency: row.currency ?? 'MXN',
      exchangeRate: rateOf(row),
    };
  }
}

/**
 * `fromDocuments`: read the documents even when the open items are kept (the reference
 * implementation the differential test compares the kept answer with).
 */
export async function getReceivablesAging(
  ctx: ServiceContext,
  tenant: string,
  input: ReceivablesAgingInput,
  opts: ReportOptions = {},
): Promise<ReceivablesAging> {
  const now = ctx.now();
  const asOf = asOfInstant(now, input.asOf);
  const client = input.client;
  const { settings, sourceOf } = await getTracedSettings(ctx.db, tenant);
  const creditDays = (c: string): number => settings.creditDaysByClient[c] ?? settings.defaultCreditDays;
  const aging = new AgingAccumulator(mxDateString(asOf), creditDays, input.limit, opts);
  const timeout = ctx.config.queryTimeoutMs;
  const kept = await useKeptReceivables(ctx.db, tenant, mxDateString(asOf), timeout, opts.fromDocuments);
  const only = client || undefined;
  if (kept) {
    // The sums per invoice day and client, and only the invoices that may be listed.
    const sums = await keptOpenSums(ctx.db, tenant, asOf, only, timeout);
    for (const d of sums.days)
      for (const g of d.groups)
        if (only === undefined || g.client === only) aging.addGroup(g.client, d.day, g.n, g.cents, { date: g.lastDate, id: g.lastId, name: g.lastName });
    const minOffset = minOffsetDays(sums.days, only, (c) => Math.round(creditDays(c)));
    const rank = (inv: RankedOpen): string => aging.dueDate(inv.client, mxDateString(inv.invoiceDate));
    for (const inv of await keptFirstOpenNow(ctx.db, tenant, only, input.limit, minOffset, rank, sums, timeout)) aging.addItem(inv);
  } else for await (const inv of documentReceivables(ctx, tenant, asOf, client)) aging.add(inv);
  return {
    tenant,
    computedAt: now.toISOString(),
    asOf: asOfOut(asOf),
    filters: { client: client ?? null, asOf: input.asOf ?? null },
    parameters: {
      creditDays: {
        default: settings.defaultCreditDays,
        byClient: { ...settings.creditDaysByClient },
        source: { default: sourceOf('defaultCreditDays'), byClient: sourceOf('creditDaysByClient') },
      },
      daysPastDue: 'as-of day − due day (America/Mexico_City calendar days); due day = invoice day + the client’s credit days; 0 or less is current',
      amounts:
        'Outstanding balance at the end of the as-of day, in MXN at each invoice’s own exchange rate: Total (already net of retentions) − valid payments − valid credit notes dated by then; invoices cancelled by then are left out.',
    },
    ...aging.result(),
  };
}
