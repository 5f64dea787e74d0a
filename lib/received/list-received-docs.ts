import type { ServiceContext } from '../context.ts';
import { serviceSecret } from '../db/service-secrets-repo.ts';
import { filtersFingerprint } from '../shared/cursor.ts';
import { listPage } from '../shared/list-page.ts';
import { dayRange } from '../shared/date-range.ts';
import type { PageMeta } from '../shared/pagination.ts';
import { getTenantSettings } from '../settings/settings-repo.ts';
import type { ReceivedCategory } from './received-category.ts';
import { findReceivedDocs, RECEIVED_DOC_SORT } from './received-repo.ts';
import { originalLinkResolver, printedFormLinkResolver } from '../originals/original-url.ts';
import { receivedDocView, type ReceivedDocView } from './received-view.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';

export interface ListReceivedDocsInput {
  page: number;
  limit: number;
  supplier?: string;
  category?: ReceivedCategory;
  startDate?: string;
  endDate?: string;
  paymentStatus?: 'paid' | 'partial' | 'unpaid';
  cancelled?: boolean;
  cursor?: string;
}

export interface ReceivedDocsPage {
  meta: PageMeta & { nextCursor: string | null; tenant: string };
  data: ReceivedDocView[];
}

/** The tenant's received CFDIs (its suppliers' invoices), newest issue date first; filters combine with AND. */
export async function listReceivedDocs(ctx: ServiceContext, tenant: string, input: ListReceivedDocsInput): Promise<ReceivedDocsPage> {
  const { page, limit, cursor, ...filters } = input;
  const { meta, docs } = await listPage({
    secret: await serviceSecret(ctx.db, 'cursor-hmac'),
    binding: { list: 'received-docs', tenant, sort: 'default', filters: filtersFingerprint(filters) },
    sort: RECEIVED_DOC_SORT,
    request: { page, limit, cursor },
    fetch: (q) =>
      findReceivedDocs(
        ctx.db,
        tenant,
        {
          supplier: input.supplier,
          category: input.category,
          issued: dayRange(input.startDate, input.endDate),
          paymentStatus: input.paymentStatus,
          cancelled: input.cancelled,
        },
        q,
        ctx.config.queryTimeoutMs,
      ),
  });
  const { receivedCategoryRules } = await getTenantSettings(ctx.db, tenant);
  return {
    meta: { ...meta, tenant },
    data: docs.map((d) =>
      receivedDocView(d, receivedCategoryRules, originalLinkResolver(ctx.config.documentBaseUrl), printedFormLinkResolver(ctx.config.documentBaseUrl)),
    ),
  };
}

export type ReceivedDocsPageCheck = Conforms<ReceivedDocsPage, components['schemas']['ReceivedDocsPage']>;
