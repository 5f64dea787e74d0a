/** POST /api/exports/datasets/tax-position: a month's tax position (GET /api/tax/position's answer) as tables, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportTaxPosition = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportTaxPosition']): Promise<ExportView> =>
  queueTableExport(ctx, tenant, 'tax-position', query);
