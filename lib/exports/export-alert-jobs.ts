/** POST /api/exports/datasets/alert-jobs: every page of GET /api/alerts/jobs with its filters, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportAlertJobs = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportAlertJobs']): Promise<ExportView> =>
  queueTableExport(ctx, tenant, 'alert-jobs', query);
