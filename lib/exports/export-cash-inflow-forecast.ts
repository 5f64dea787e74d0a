/** POST /api/exports/datasets/cash-inflow-forecast: the cash inflow forecast (its JSON answer) as tables, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportCashInflowForecast = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportCashInflowForecast']): Promise<ExportView> =>
  queueTableExport(ctx, tenant, 'cash-inflow-forecast', query);
