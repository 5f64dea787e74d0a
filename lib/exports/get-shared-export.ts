/** GET /api/shared-exports/{token}: a ready export's file through its signed link, without an API key; one 404 for every failure of the token. */
import type { ServiceContext } from '../context.ts';
import { serviceSecret } from '../db/service-secrets-repo.ts';
import { notFound } from '../http/api-error.ts';
import { EXPORT_LINK_SECRET, verifyExportLink } from './export-link.ts';
import { statusAt } from './export-record.ts';
import { findExport } from './exports-repo.ts';
import { servedExportFile, type ServedExportFile } from './get-export-file.ts';

export async function getSharedExport(ctx: ServiceContext, input: { token: string }): Promise<ServedExportFile> {
  const gone = () => notFound('this link is not valid: expired, changed, or its file is no longer kept');
  const claims = verifyExportLink(await serviceSecret(ctx.db, EXPORT_LINK_SECRET), input.token, Math.floor(ctx.now().getTime() / 1000));
  if (!claims) throw gone();
  const doc = await findExport(ctx.db, claims.tenant, claims.exportId);
  if (!doc || statusAt(doc, ctx.now()) !== 'ready') throw gone();
  return servedExportFile(ctx, doc);
}
