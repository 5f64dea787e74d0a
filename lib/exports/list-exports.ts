/** GET /api/exports: the tenant's exports, newest first, by page or by cursor. */
import type { ServiceContext } from '../context.ts';
import { serviceSecret } from '../db/service-secrets-repo.ts';
import { NEWEST_FIRST } from '../db/find-page.ts';
import { filtersFingerprint } from '../shared/cursor.ts';
import { listPage, type ListRequest } from '../shared/list-page.ts';
import type { PageMeta } from '../shared/pagination.ts';
import { exportView, type ExportView } from './export-view.ts';
import { findExports } from './exports-repo.ts';

export async function listExports(
  ctx: ServiceContext,
  tenant: string,
  input: ListRequest,
): Promise<{ meta: PageMeta & { nextCursor: string | null; tenant: string }; data: ExportView[] }> {
  const { meta, docs } = await listPage({
    secret: await serviceSecret(ctx.db, 'cursor-hmac'),
    binding: { list: 'exports', tenant, sort: 'default', filters: filtersFingerprint({}) },
    sort: NEWEST_FIRST,
    request: { page: input.page, limit: input.limit, cursor: input.cursor },
    fetch: (q) => findExports(ctx.db, tenant, q, ctx.config.queryTimeoutMs),
  });
  return { meta: { ...meta, tenant }, data: await Promise.all(docs.map((d) => exportView(ctx, d))) };
}
