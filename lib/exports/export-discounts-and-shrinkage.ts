/** POST /api/exports/datasets/discounts-and-shrinkage: the discounts and shrinkage audit (its JSON answer) as tables, as CSV or XLSX (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { queueTableExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportDiscountsAndShrinkage = (
  ctx: ExportRunContext,
  tenant: string,
  query: ValidatedQueries['exportDiscountsAndShrinkage'],
): Promise<ExportView> => queueTableExport(ctx, tenant, 'discounts-and-shrinkage', query);
