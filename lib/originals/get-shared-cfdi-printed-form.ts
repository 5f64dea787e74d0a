import type { ServiceContext } from '../context.ts';
import { serviceSecret } from '../db/service-secrets-repo.ts';
import { notFound } from '../http/api-error.ts';
import { findCfdiOriginal } from './find-cfdi-original.ts';
import { printedFormOf, type ServedPrintedForm } from './printed-form.ts';
import { LINK_SECRET, verifyLink } from './signed-link.ts';

/** The printed form of the original a signed link names, without an API key; one 404 for every failure of the token (as the XML's link). */
export async function getSharedCfdiPrintedForm(ctx: ServiceContext, input: { token: string }): Promise<ServedPrintedForm> {
  const gone = () => notFound('this link is not valid: expired, changed, or its file is no longer kept');
  const claims = verifyLink(await serviceSecret(ctx.db, LINK_SECRET), input.token, Math.floor(ctx.now().getTime() / 1000));
  if (!claims) throw gone();
  const record = await findCfdiOriginal(ctx.db, claims.tenant, claims.uuid, ctx.config.queryTimeoutMs);
  if (!record) throw gone();
  return printedFormOf(record, claims.uuid);
}
