import type { ServiceContext } from '../context.ts';
import { notFound } from '../http/api-error.ts';
import { findCfdiOriginal } from './find-cfdi-original.ts';
import { servedOriginal, type ServedOriginal } from './served-original.ts';

/** The tenant's kept original XML of a CFDI by UUID; another tenant's is "not found" too. */
export async function getCfdiOriginal(ctx: ServiceContext, tenant: string, input: { uuid: string }): Promise<ServedOriginal> {
  const record = await findCfdiOriginal(ctx.db, tenant, input.uuid, ctx.config.queryTimeoutMs);
  if (!record) throw notFound(`no original XML is kept for CFDI ${input.uuid.toUpperCase()} of this tenant`);
  return servedOriginal(record, input.uuid);
}
