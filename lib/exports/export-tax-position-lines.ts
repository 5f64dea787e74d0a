/** POST /api/exports/datasets/tax-position-lines: every page of GET /api/tax/position/lines with its filters, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportTaxPositionLines = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportTaxPositionLines']): Promise<ExportView> =>
  queueTableExport(ctx, tenant, 'tax-position-lines', query);
