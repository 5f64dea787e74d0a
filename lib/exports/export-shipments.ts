/** POST /api/exports/datasets/shipments: every page of GET /api/shipments with its filters, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportShipments = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportShipments']): Promise<ExportView> =>
  queueTableExport(ctx, tenant, 'shipments', query);
