import type { ServiceContext } from '../context.ts';
import { originalLinkResolver, printedFormLinkResolver } from '../originals/original-url.ts';
import { findFinancialDocsByIds } from '../finance/financial-docs-repo.ts';
import { getTenantSettings, statusLabel } from '../settings/settings-repo.ts';
import type { TripDocument } from '../model/trip-document.ts';
import { tripSummary, type TripSummary } from './summary.ts';

/** Summary forms of some of the tenant's trips, with their linked documents fetched in one batch. */
export async function summarizeTrips(ctx: ServiceContext, tenant: string, docs: TripDocument[]): Promise<TripSummary[]> {
  const ids = [...new Set(docs.map((t) => t.idFinan).filter((id): id is string => typeof id === 'string'))];
  // One batched, tenant-scoped query: a link to another tenant's document resolves to null.
  const [settings, linked] = await Promise.all([getTenantSettings(ctx.db, tenant), findFinancialDocsByIds(ctx.db, tenant, ids, ctx.config.queryTimeoutMs)]);
  const byId = new Map(linked.map((d) => [d._id, d]));
  const summaryCtx = {
    settings,
    statusLabel: (code: number) => statusLabel(settings, code),
    originalUrl: originalLinkResolver(ctx.config.documentBaseUrl),
    printedFormUrl: printedFormLinkResolver(ctx.config.documentBaseUrl),
  };
  return docs.map((t) => tripSummary(t, (t.idFinan && byId.get(t.idFinan)) || null, summaryCtx));
}
