import type { ServiceContext } from '../context.ts';
import { serviceSecret } from '../db/service-secrets-repo.ts';
import { notFound } from '../http/api-error.ts';
import { findCfdiOriginal } from './find-cfdi-original.ts';
import { sharedOriginalPath } from './original-url.ts';
import { LINK_SECRET, signLink } from './signed-link.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';

export interface OriginalLink {
  uuid: string;
  url: string;
  expiresAt: string;
}

/** A link to the tenant's kept original that works without a key for `expiresIn` seconds (validated by the spec: 60 to 604800). */
export async function createCfdiOriginalLink(ctx: ServiceContext, tenant: string, input: { uuid: string; expiresIn: number }): Promise<OriginalLink> {
  const uuid = input.uuid.toUpperCase();
  const record = await findCfdiOriginal(ctx.db, tenant, uuid, ctx.config.queryTimeoutMs);
  if (!record) throw notFound(`no original XML is kept for CFDI ${uuid} of this tenant`);
  const expiresAt = Math.floor(ctx.now().getTime() / 1000) + input.expiresIn;
  const token = signLink(await serviceSecret(ctx.db, LINK_SECRET), { tenant, uuid, expiresAt });
  return { uuid, url: `${ctx.config.documentBaseUrl}${sharedOriginalPath(token)}`, expiresAt: new Date(expiresAt * 1000).toISOString() };
}

// Checked against the spec: a field renamed on one side only fails type-checking here.
export type OriginalLinkCheck = Conforms<OriginalLink, components['schemas']['OriginalLink']>;
