import type { ServiceContext } from '../context.ts';
import { notFound } from '../http/api-error.ts';
import { getTenantSettings } from '../settings/settings-repo.ts';
import { findReceivedDocById } from './received-repo.ts';
import { originalLinkResolver, printedFormLinkResolver } from '../originals/original-url.ts';
import { receivedDocView, type ReceivedDocView } from './received-view.ts';

/** One received CFDI of the tenant by id; another tenant's id is "not found" too, so ids never leak. */
export async function getReceivedDoc(ctx: ServiceContext, tenant: string, input: { id: string }): Promise<ReceivedDocView> {
  const row = await findReceivedDocById(ctx.db, tenant, input.id, ctx.config.queryTimeoutMs);
  if (!row) throw notFound('no such received document for this tenant');
  const { receivedCategoryRules } = await getTenantSettings(ctx.db, tenant);
  return receivedDocView(row, receivedCategoryRules, originalLinkResolver(ctx.config.documentBaseUrl), printedFormLinkResolver(ctx.config.documentBaseUrl));
}
