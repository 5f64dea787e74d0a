import type { ServiceContext } from '../context.ts';
import { serviceSecret } from '../db/service-secrets-repo.ts';
import { notFound } from '../http/api-error.ts';
import { findCfdiOriginal } from './find-cfdi-original.ts';
import { servedOriginal, type ServedOriginal } from './served-original.ts';
import { LINK_SECRET, verifyLink } from './signed-link.ts';

/** The original a signed link names, without an API key; the tenant comes from the signed token. One 404 for every failure: it says nothing to a guesser. */
export async function getSharedCfdiOriginal(ctx: ServiceContext, input: { token: string }): Promise<ServedOriginal> {
  const gone = () => notFound('this link is not valid: expired, changed, or its file is no longer kept');
  const claims = verifyLink(await serviceSecret(ctx.db, LINK_SECRET), input.token, Math.floor(ctx.now().getTime() / 1000));
  if (!claims) throw gone();
  const record = await findCfdiOriginal(ctx.db, claims.tenant, claims.uuid, ctx.config.queryTimeoutMs);
  if (!record) throw gone();
  return servedOriginal(record, claims.uuid);
}
