import type { ServiceContext } from '../context.ts';
import { notFound } from '../http/api-error.ts';
import { findCfdiOriginal } from './find-cfdi-original.ts';
import { printedFormOf, type ServedPrintedForm } from './printed-form.ts';

/** The printed form (PDF) of the tenant's kept original of a CFDI by UUID; another tenant's is "not found" too. */
export async function getCfdiPrintedForm(ctx: ServiceContext, tenant: string, input: { uuid: string }): Promise<ServedPrintedForm> {
  const record = await findCfdiOriginal(ctx.db, tenant, input.uuid, ctx.config.queryTimeoutMs);
  if (!record) throw notFound(`no original XML is kept for CFDI ${input.uuid.toUpperCase()} of this tenant: it has no printed form`);
  return printedFormOf(record, input.uuid);
}
