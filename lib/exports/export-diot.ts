/** POST /api/exports/datasets/diot: a month's DIOT (GET /api/tax/diot's JSON answer) as tables, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportDiot = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportDiot']): Promise<ExportView> =>
  queueTableExport(ctx, tenant, 'diot', query);
