/** POST /api/exports/datasets/received-docs: every page of GET /api/received-docs with its filters, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportReceivedDocs = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportReceivedDocs']): Promise<ExportView> =>
  queueTableExport(ctx, tenant, 'received-docs', query);
