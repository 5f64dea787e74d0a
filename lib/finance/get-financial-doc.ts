import type { ServiceContext } from '../context.ts';
import { findFinancialDocById } from './financial-docs-repo.ts';
import { notFound } from '../http/api-error.ts';
import type { FinancialDocument } from '../model/financial-document.ts';
import { financialSummary, type FinancialSummary } from './summary.ts';
import { loadSummaryContext } from './summary-context.ts';

export interface GetFinancialDocInput {
  id: string;
  detail: 'summary' | 'full';
}

/** One document of the tenant; another tenant's id is "not found" too, so ids never leak. */
export async function getFinancialDoc(ctx: ServiceContext, tenant: string, input: GetFinancialDocInput): Promise<FinancialSummary | FinancialDocument> {
  const doc = await findFinancialDocById(ctx.db, tenant, input.id, ctx.config.queryTimeoutMs);
  if (!doc) throw notFound('no such financial document for this tenant');
  if (input.detail === 'full') return doc;
  return financialSummary(doc, await loadSummaryContext(ctx, tenant));
}
