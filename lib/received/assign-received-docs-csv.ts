/**
 * assignReceivedDocsCsv (POST /api/received-assignments/csv): the assignments as the CSV template,
 * made exactly as assignReceivedDocs makes its rows (its own operation so that each request body
 * has one media type).
 */
import type { ServiceContext } from '../context.ts';
import { assignReceivedDocs, type AssignmentsReport } from './assign-received-docs.ts';

export function assignReceivedDocsCsv(ctx: ServiceContext, tenant: string, csv: Buffer): Promise<AssignmentsReport> {
  return assignReceivedDocs(ctx, tenant, { csv });
}
