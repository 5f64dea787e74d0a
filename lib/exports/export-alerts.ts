/** POST /api/exports/datasets/alerts: every page of GET /api/alerts with its filters, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportAlerts = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportAlerts']): Promise<ExportView> =>
  queueTableExport(ctx, tenant, 'alerts', query);
