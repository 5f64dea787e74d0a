/** POST /api/exports/datasets/fleet-utilization: the fleet utilization audit (its JSON answer) as tables, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportFleetUtilization = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportFleetUtilization']): Promise<ExportView> =>
  queueTableExport(ctx, tenant, 'fleet-utilization', query);
