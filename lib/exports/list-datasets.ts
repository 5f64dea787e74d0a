/**
 * The list datasets (docs/exports.md): every list the API pages through, exported whole with all
 * its filters. Each walks its JSON operation's own domain function page by page (by cursor where
 * the list has one, else by page number), at the operation's largest page size, so a file holds
 * exactly what the JSON pages hold and memory stays at one page whatever the list's length. The
 * columns are the JSON paths of the list's items (spec-columns.ts); a list of detail levels
 * exports its summary items.
 */
import type { ServiceContext } from '../context.ts';
import { keptOpenAsOfPage } from '../analytics/kept-open-as-of-page.ts';
import { listFinancialDocs, type ListFinancialDocsInput } from '../finance/list-financial-docs.ts';
import { listShipments, type ListShipmentsInput } from '../trips/list-shipments.ts';
import { listReceivedDocs, type ListReceivedDocsInput } from '../received/list-received-docs.ts';
import { listTaxPositionLines } from '../tax/list-tax-position-lines.ts';
import { listAlertJobs, type ListAlertJobsInput } from '../alerts/list-alert-jobs.ts';
import { listAlerts, type ListAlertsInput } from '../alerts/list-alerts.ts';
import type { ExportCell, ExportContext, ExportDataset, ExportTable } from './export-dataset.ts';
import { cellAt, columnsOf, listItemSchema, specOperation } from './spec-columns.ts';

/** What a list's page says about the next one. */
interface AnyPage {
  meta: { total?: number | null; hasMore: boolean; nextCursor?: string | null; syncFrom?: string };
  data: readonly unknown[];
}
type Query = Readonly<Record<string, unknown>>;
/** The query as the operation's validator left it, with the walk's paging: the domain function's input. */
export type PageFetch = (ctx: ServiceContext, tenant: string, query: Query) => Promise<AnyPage>;

/** The table every list dataset holds: its items (`data[]`). */
export const LIST_TABLE = 'data';

const serviceContextOf = (ctx: ExportContext): ServiceContext => ({ db: ctx.db, config: ctx.config, now: () => ctx.now, openAsOfPage: keptOpenAsOfPage });

function largestPage(operationId: string): number {
  const limit = specOperation(operationId).querystring?.properties;
  const max = limit && typeof limit === 'object' && !Array.isArray(limit) ? (limit.limit as { maximum?: unknown } | undefined)?.maximum : undefined;
  return typeof max === 'number' ? max : 100;
}

/** Every item of a list, page after page (by cursor where the list gives one). */
export async function* walkList(fetch: PageFetch, ctx: ExportContext, query: Query, limit: number, onFirst: (page: AnyPage) => void): AsyncGenerator<unknown> {
  const service = serviceContextOf(ctx);
  let page = 1;
  let cursor: string | undefined;
  for (;;) {
    const answer = await fetch(service, ctx.tenant, { ...query, page: cursor === undefined ? page : 1, limit, ...(cursor === undefined ? {} : { cursor }) });
    if (page === 1) onFirst(answer);
    yield* answer.data;
    if (!answer.meta.hasMore || answer.data.length === 0) return;
    if (answer.meta.nextCursor) cursor = answer.meta.nextCursor;
    page++;
  }
}

function listDataset(name: string, operationId: string, fetch: PageFetch): ExportDataset {
  return {
    name,
    operationId,
    kind: 'list',
    async tables(ctx: ExportContext, query: Query): Promise<readonly ExportTable[]> {
      const columns = columnsOf(listItemSchema(specOperation(operationId)));
      const limit = largestPage(operationId);
      async function* rows(): AsyncGenerator<readonly ExportCell[]> {
        const items = walkList(fetch, ctx, query, limit, (first) => {
          if (typeof first.meta.total === 'number') ctx.onTotal?.(LIST_TABLE, first.meta.total);
          if (typeof first.meta.syncFrom === 'string') ctx.onSyncFrom?.(first.meta.syncFrom);
        });
        for await (const item of items) yield columns.map((c) => cellAt(item, c.name));
      }
      return [{ name: LIST_TABLE, columns, rows: rows() }];
    },
  };
}

/** The validated query is the domain function's input (the handler passes the same object on). */
const as = <T>(query: Query): T => query as unknown as T;

export const LIST_DATASETS: readonly ExportDataset[] = [
  listDataset('financial-docs', 'listFinancialDocs', (ctx, tenant, q) =>
    listFinancialDocs(ctx, tenant, { ...as<ListFinancialDocsInput>(q), detail: 'summary' }),
  ),
  listDataset('shipments', 'listShipments', (ctx, tenant, q) => listShipments(ctx, tenant, { ...as<ListShipmentsInput>(q), detail: 'summary' })),
  listDataset('received-docs', 'listReceivedDocs', (ctx, tenant, q) => listReceivedDocs(ctx, tenant, as<ListReceivedDocsInput>(q))),
  listDataset('tax-position-lines', 'listTaxPositionLines', (ctx, tenant, q) =>
    listTaxPositionLines(ctx, tenant, as<Parameters<typeof listTaxPositionLines>[2]>(q)),
  ),
  listDataset('alert-jobs', 'listAlertJobs', (ctx, tenant, q) => listAlertJobs(ctx, tenant, as<ListAlertJobsInput>(q))),
  listDataset('alerts', 'listAlerts', (ctx, tenant, q) => listAlerts(ctx, tenant, as<ListAlertsInput>(q))),
];
