/** GET /api/exports: the tenant's exports, newest first. */
import type { ServiceContext } from '../context.ts';
import { pageMeta, pageWindow, type PageMeta } from '../shared/pagination.ts';
import { exportView, type ExportView } from './export-view.ts';
import { findExports } from './exports-repo.ts';

export async function listExports(
  ctx: ServiceContext,
  tenant: string,
  input: { page: number; limit: number },
): Promise<{ meta: PageMeta & { tenant: string }; data: ExportView[] }> {
  const { total, docs } = await findExports(ctx.db, tenant, pageWindow(input), ctx.config.queryTimeoutMs);
  return { meta: { ...pageMeta(total, input), tenant }, data: await Promise.all(docs.map((d) => exportView(ctx, d))) };
}
