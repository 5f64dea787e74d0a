import type { ServiceContext } from '../context.ts';
import { originalLinkResolver, printedFormLinkResolver } from '../originals/original-url.ts';
import { getTenantSettings, statusLabel } from '../settings/settings-repo.ts';
import type { SummaryContext } from './summary.ts';

/** What the summary form of a tenant's documents needs: its status labels and the links to kept originals and their printed forms. */
export async function loadSummaryContext(ctx: ServiceContext, tenant: string): Promise<SummaryContext> {
  const settings = await getTenantSettings(ctx.db, tenant);
  return {
    statusLabel: (code: number) => statusLabel(settings, code),
    originalUrl: originalLinkResolver(ctx.config.documentBaseUrl),
    printedFormUrl: printedFormLinkResolver(ctx.config.documentBaseUrl),
    currency: settings.currency ?? 'MXN',
  };
}
