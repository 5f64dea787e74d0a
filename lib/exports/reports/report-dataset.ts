/**
 * A report as an export dataset: the operation's validated query handed to the domain service its
 * handler calls, the answer written as tables (tabulate.ts).
 */
import type { ServiceContext } from '../../context.ts';
import type { ValidatedQueries } from '../../../generated/validated.d.ts';
import type { ExportContext, ExportDataset } from '../export-dataset.ts';
import { tabulate, type ReportTableSpec } from './tabulate.ts';

/**
 * What a report's domain service needs inside an export: the export's database and clock, and the
 * service's settings (`config`: the query time limit), which the exports runner passes beside them.
 */
export type ReportExportContext = ExportContext & Pick<ServiceContext, 'config'>;

export function reportServiceContext(ctx: ReportExportContext): ServiceContext {
  return { db: ctx.db, config: ctx.config, now: () => ctx.now };
}

export type ReportOperationId = keyof ValidatedQueries;

export interface ReportDefinition<K extends ReportOperationId> {
  readonly name: string;
  readonly operationId: K;
  /** The domain service the operation's handler calls, with the handler's arguments. */
  readonly run: (ctx: ServiceContext, tenant: string, query: ValidatedQueries[K]) => Promise<object>;
  readonly tables: readonly ReportTableSpec[];
}

/**
 * A report's dataset: the operation's validated query (the exports runner validates it with the
 * operation's own validator, defaults filled in) handed to the same domain service its handler calls.
 */
/** A report's dataset, with its tables and columns known without running it (docs, a dataset's description). */
export interface ReportDataset extends ExportDataset {
  readonly tableSpecs: readonly ReportTableSpec[];
}

export function reportDataset<K extends ReportOperationId>(def: ReportDefinition<K>): ReportDataset {
  return {
    name: def.name,
    tableSpecs: def.tables,
    operationId: def.operationId,
    kind: 'report',
    async tables(ctx: ReportExportContext, query: Readonly<Record<string, unknown>>) {
      const answer = await def.run(reportServiceContext(ctx), ctx.tenant, query as ValidatedQueries[K]);
      return tabulate(answer, def.tables);
    },
  };
}
