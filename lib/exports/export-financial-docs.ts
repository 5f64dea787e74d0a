/** POST /api/exports/datasets/financial-docs: every page of GET /api/financial-docs with its filters, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportFinancialDocs = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportFinancialDocs']): Promise<ExportView> =>
  queueTableExport(ctx, tenant, 'financial-docs', query);
