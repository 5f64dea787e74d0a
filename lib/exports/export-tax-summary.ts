/** POST /api/exports/datasets/tax-summary: the tax summary (GET /api/tax-summary's answer) as tables, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportTaxSummary = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportTaxSummary']): Promise<ExportView> =>
  queueTableExport(ctx, tenant, 'tax-summary', query);
