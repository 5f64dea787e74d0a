/** GET /api/exports/{id}: one of the tenant's exports, where its job stands (404 for another tenant's). */
import type { ServiceContext } from '../context.ts';
import { notFound } from '../http/api-error.ts';
import { exportView, type ExportView } from './export-view.ts';
import { findExport } from './exports-repo.ts';

export async function getExport(ctx: ServiceContext, tenant: string, input: { id: string }): Promise<ExportView> {
  const doc = await findExport(ctx.db, tenant, input.id);
  if (!doc) throw notFound(`no export ${input.id} for this tenant`);
  return exportView(ctx, doc);
}
