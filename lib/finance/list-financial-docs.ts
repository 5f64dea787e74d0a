import type { ServiceContext } from '../context.ts';
import { findFinancialDocs, type FinancialDocFilter } from '../db/financial-docs-repo.ts';
import type { FinancialDocument } from '../model/financial-document.ts';
import { dayRange } from '../shared/date-range.ts';
import { pageMeta, pageWindow, type PageMeta } from '../shared/pagination.ts';
import { financialSummary, type FinancialSummary } from './summary.ts';
import { loadSummaryContext } from './summary-context.ts';

export interface ListFinancialDocsInput {
  page: number;
  limit: number;
  detail: 'summary' | 'full';
  startDate?: string;
  endDate?: string;
  client?: string;
  status?: number;
  uuid?: string;
  folio?: string;
  paymentStatus?: 'paid' | 'partial' | 'unpaid';
  cancelled?: boolean;
}

export type FinancialDocsPage =
  | { meta: PageMeta & { tenant: string; detail: 'summary' }; data: FinancialSummary[] }
  | { meta: PageMeta & { tenant: string; detail: 'full' }; data: FinancialDocument[] };

export async function listFinancialDocs(ctx: ServiceContext, tenant: string, input: ListFinancialDocsInput): Promise<FinancialDocsPage> {
  const window = pageWindow(input);
  const filter: FinancialDocFilter = {
    emitted: dayRange(input.startDate, input.endDate),
    client: input.client,
    status: input.status,
    uuid: input.uuid,
    folio: input.folio,
    paymentStatus: input.paymentStatus,
    cancelled: input.cancelled,
  };
  const { total, docs } = await findFinancialDocs(ctx.db, tenant, filter, window, ctx.config.queryTimeoutMs);
  const meta = { ...pageMeta(total, input), tenant };
  if (input.detail === 'full') return { meta: { ...meta, detail: 'full' }, data: docs };
  const summaryCtx = await loadSummaryContext(ctx, tenant);
  return { meta: { ...meta, detail: 'summary' }, data: docs.map((d) => financialSummary(d, summaryCtx)) };
}
