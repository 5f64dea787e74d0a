import type { ServiceContext } from '../context.ts';
import { createCfdiOriginalLink, type OriginalLink } from './create-cfdi-original-link.ts';
import { SHARED_PRINTED_FORM_SUFFIX } from './original-url.ts';

/**
 * A link to the printed form of the tenant's kept original that works without a key for
 * `expiresIn` seconds: the token the XML's link carries (tenant, UUID, expiry), at its PDF address.
 */
export async function createCfdiPrintedFormLink(ctx: ServiceContext, tenant: string, input: { uuid: string; expiresIn: number }): Promise<OriginalLink> {
  const link = await createCfdiOriginalLink(ctx, tenant, input);
  return { ...link, url: `${link.url}${SHARED_PRINTED_FORM_SUFFIX}` };
}
