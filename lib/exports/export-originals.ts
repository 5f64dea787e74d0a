/** POST /api/exports/datasets/originals: the XML and printed form of a period's CFDIs, as a zip (docs/exports.md). */
import type { ValidatedQueries } from '../../generated/validated.d.ts';
import type { ExportView } from './export-view.ts';
import { ORIGINALS_DATASET } from './originals-zip.ts';
import { queueExport } from './queue-export.ts';
import type { ExportRunContext } from './run-export.ts';

export const exportOriginals = (ctx: ExportRunContext, tenant: string, query: ValidatedQueries['exportOriginals']): Promise<ExportView> =>
  queueExport(ctx, tenant, { dataset: ORIGINALS_DATASET, format: 'zip', table: null, query: { ...query } });
