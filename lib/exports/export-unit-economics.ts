/** POST /api/exports/datasets/unit-economics: the freight unit economics (its JSON answer) as tables, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportUnitEconomics = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportUnitEconomics']): Promise<ExportView> =>
  queueTableExport(ctx, tenant, 'unit-economics', query);
