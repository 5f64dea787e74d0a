import type { ServiceContext } from '../context.ts';
import { findFinancialDocById } from './financial-docs-repo.ts';
import { notFound } from '../http/api-error.ts';
import { documentView, type FinancialDocumentView } from './document-view.ts';
import { financialSummary, type FinancialSummary } from './summary.ts';
import { loadSummaryContext } from './summary-context.ts';

export interface GetFinancialDocInput {
  id: string;
  detail: 'summary' | 'full';
}

/** One document of the tenant; another tenant's id is "not found" too, so ids never leak. */
export async function getFinancialDoc(ctx: ServiceContext, tenant: string, input: GetFinancialDocInput): Promise<FinancialSummary | FinancialDocumentView> {
  const doc = await findFinancialDocById(ctx.db, tenant, input.id, ctx.config.queryTimeoutMs);
  if (!doc) throw notFound('no such financial document for this tenant');
  if (input.detail === 'full') return documentView(doc);
  return financialSummary(doc, await loadSummaryContext(ctx, tenant));
}
