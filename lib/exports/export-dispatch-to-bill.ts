/** POST /api/exports/datasets/dispatch-to-bill: the dispatch-to-bill audit (its JSON answer) as tables, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportDispatchToBill = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportDispatchToBill']): Promise<ExportView> =>
  queueTableExport(ctx, tenant, 'dispatch-to-bill', query);
