import type { ServiceContext } from '../context.ts';
import { findFinancialDocs, findFinancialDocsByIds, FINANCIAL_DOC_SORTS, type FinancialDocFilter } from './financial-docs-repo.ts';
import { serviceSecret } from '../db/service-secrets-repo.ts';
import { SYNC_CLOCK_MARGIN_MS, syncFrom } from '../db/writes-in-flight.ts';
import { filtersFingerprint } from '../shared/cursor.ts';
import { isoInstant, listPage } from '../shared/list-page.ts';
import type { CancellationStatus, FinancialDocument } from '../model/financial-document.ts';
import { documentView, type FinancialDocumentView } from './document-view.ts';
import { dayRange } from '../shared/date-range.ts';
import { asOfInstant } from '../shared/as-of-day.ts';
import type { PageMeta } from '../shared/pagination.ts';
import type { PageQuery } from '../shared/keyset.ts';
import { financialSummary, type FinancialSummary } from './summary.ts';
import { loadSummaryContext } from './summary-context.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';

export interface ListFinancialDocsInput {
  page: number;
  limit: number;
  detail: 'summary' | 'full';
  startDate?: string;
  endDate?: string;
  client?: string;
  status?: number;
  uuid?: string;
  folio?: string;
  paymentStatus?: 'paid' | 'partial' | 'unpaid';
  cancelled?: boolean;
  cancellationStatus?: CancellationStatus;
  /** ISO date-time: only documents changed at or after it, oldest change first. */
  updatedSince?: string;
  /** Continues a walk where the page that returned it as `meta.nextCursor` ended. */
  cursor?: string;
  /** YYYY-MM-DD: only invoices open at the end of that day (docs/domain.md "Receivables as of a date"). */
  openAsOf?: string;
}

/** `syncFrom` (with `updatedSince`): where the next incremental sync resumes, lib/db/writes-in-flight.ts. */
type Meta = PageMeta & { nextCursor: string | null; tenant: string; syncFrom?: string };
export type FinancialDocsPage =
  { meta: Meta & { detail: 'summary' }; data: FinancialSummary[] } | { meta: Meta & { detail: 'full' }; data: FinancialDocumentView[] };

export async function listFinancialDocs(ctx: ServiceContext, tenant: string, input: ListFinancialDocsInput): Promise<FinancialDocsPage> {
  const { detail, ...walk } = input;
  const { meta, docs } = await storedPage(ctx, tenant, walk);
  if (detail === 'full') return { meta: { ...meta, detail: 'full' }, data: docs.map(documentView) };
  const summaryCtx = await loadSummaryContext(ctx, tenant);
  return { meta: { ...meta, detail: 'summary' }, data: docs.map((d) => financialSummary(d, summaryCtx)) };
}

/** A stored document as the version 1 schema types it (a free-form object: a mapped type, so it takes an index signature). */
type StoredDocumentV1 = { [K in keyof FinancialDocument]: FinancialDocument[K] };

/**
 * Version 1 (deprecated): the earlier bare array of stored documents, with `_id` as that shape
 * had it (the interface's "earlier shape"; version 2 answers name the document `id` only). With
 * `updatedSince`, where the next sync resumes (`syncFrom`): the handler sends it as a header.
 */
export async function listFinancialDocsV1(
  ctx: ServiceContext,
  tenant: string,
  input: ListFinancialDocsInput,
): Promise<{ docs: StoredDocumentV1[]; syncFrom?: string }> {
  const { detail: _full, ...walk } = input;
  const { meta, docs } = await storedPage(ctx, tenant, walk);
  return { docs, ...(meta.syncFrom === undefined ? {} : { syncFrom: meta.syncFrom }) };
}

async function storedPage(
  ctx: ServiceContext,
  tenant: string,
  input: Omit<ListFinancialDocsInput, 'detail'>,
): Promise<{ meta: Meta; docs: FinancialDocument[] }> {
  // The detail level changes the shape, not the walk: a cursor serves both.
  const { page, limit, cursor, ...filters } = input;
  const filter: FinancialDocFilter = {
    emitted: dayRange(input.startDate, input.endDate),
    client: input.client,
    status: input.status,
    uuid: input.uuid,
    folio: input.folio,
    paymentStatus: input.paymentStatus,
    cancelled: input.cancelled,
    cancellationStatus: input.cancellationStatus,
    updatedSince: input.updatedSince === undefined ? undefined : isoInstant(input.updatedSince, 'updatedSince'),
    openAsOf: input.openAsOf === undefined ? undefined : asOfInstant(ctx.now(), input.openAsOf),
  };
  const sort = filter.updatedSince === undefined ? 'default' : 'sync';
  const { meta: pageMeta, docs } = await listPage({
    secret: await serviceSecret(ctx.db, 'cursor-hmac'),
    binding: { list: 'financial-docs', tenant, sort, filters: filtersFingerprint(filters) },
    sort: FINANCIAL_DOC_SORTS[sort],
    request: { page, limit, cursor },
    fetch: async (q) => (await keptOpenPage(ctx, tenant, filter, q)) ?? findFinancialDocs(ctx.db, tenant, filter, q, ctx.config.queryTimeoutMs),
    // A sync walk (`updatedSince`) says where the next one resumes.
    syncFrom: sort === 'sync' ? () => syncFrom(ctx.db, tenant, () => ctx.now().getTime(), SYNC_CLOCK_MARGIN_MS, ctx.config.queryTimeoutMs) : undefined,
  });
  return { meta: { ...pageMeta, tenant }, docs };
}

/**
 * `openAsOf` (with a client or not, nothing else) from the kept open-items index: the page's
 * documents in its order, read by id, instead of the balance as of the date evaluated on every
 * document emitted by then. Null when another filter is asked or the index cannot answer: the
 * documents are evaluated (the same answer, docs/rollups.md "Receivables").
 */
async function keptOpenPage(
  ctx: ServiceContext,
  tenant: string,
  filter: FinancialDocFilter,
  q: PageQuery,
): Promise<{ total: number | null; docs: FinancialDocument[] } | null> {
  const { openAsOf, client, emitted, ...others } = filter;
  const narrowed = emitted?.from !== undefined || emitted?.to !== undefined || Object.values(others).some((v) => v !== undefined);
  if (openAsOf === undefined || !ctx.openAsOfPage || narrowed) return null;
  const kept = await ctx.openAsOfPage(ctx.db, tenant, { asOf: openAsOf, ...(client === undefined ? {} : { client }) }, q, ctx.config.queryTimeoutMs);
  if (!kept) return null;
  const ids = kept.ids.filter((id): id is string => typeof id === 'string');
  const byId = new Map((await findFinancialDocsByIds(ctx.db, tenant, ids, ctx.config.queryTimeoutMs)).map((d) => [d._id as unknown, d] as const));
  return { total: kept.total, docs: kept.ids.flatMap((id) => byId.get(id) ?? []) };
}

// Checked against the spec's page schemas (each detail level its own).
export type FinancialDocsPageChecks = [
  Conforms<Extract<FinancialDocsPage, { meta: { detail: 'summary' } }>['meta'], components['schemas']['FinancialDocsSummaryPage']['meta']>,
  Conforms<Extract<FinancialDocsPage, { meta: { detail: 'full' } }>['data'], components['schemas']['FinancialDocsFullPage']['data']>,
];
