import type { ServiceContext } from '../context.ts';
import { fileUrlResolver } from '../context.ts';
import { getTenantSettings, statusLabel } from '../settings/settings-repo.ts';
import type { SummaryContext } from './summary.ts';

/** What the summary form of a tenant's documents needs: its status labels and the file URL base. */
export async function loadSummaryContext(ctx: ServiceContext, tenant: string): Promise<SummaryContext> {
  const settings = await getTenantSettings(ctx.db, tenant);
  return {
    statusLabel: (code: number) => statusLabel(settings, code),
    fileUrl: fileUrlResolver(ctx.config.documentBaseUrl),
    currency: settings.currency ?? 'MXN',
  };
}
