/** POST /api/exports/datasets/receivables-aging: the receivables aging (GET /api/receivables/aging's answer) as tables, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportReceivablesAging = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportReceivablesAging']): Promise<ExportView> =>
  queueTableExport(ctx, tenant, 'receivables-aging', query);
