/** The page shape shared by the two alert list operations: one tenant-scoped page of views, by page number or cursor. */
import type { Db } from 'mongodb';
import { serviceSecret } from '../db/service-secrets-repo.ts';
import { filtersFingerprint } from '../shared/cursor.ts';
import type { KeysetSort, PageQuery } from '../shared/keyset.ts';
import { listPage, type ListRequest } from '../shared/list-page.ts';
import type { PageMeta } from '../shared/pagination.ts';

export interface AlertsPage<T> {
  meta: PageMeta & { nextCursor: string | null; tenant: string };
  data: T[];
}

/**
 * One page (lib/shared/list-page.ts): by `page`, or by `cursor`, which walks any depth at the same cost and never
 * repeats or skips a record when newer ones arrive meanwhile (what an export of a list being written needs).
 */
export async function alertsPage<D extends { _id: unknown }, V>(
  db: Db,
  tenant: string,
  list: 'alerts' | 'alert-jobs',
  request: ListRequest & { filters: Record<string, unknown> },
  sort: KeysetSort,
  find: (q: PageQuery) => Promise<{ total: number | null; docs: D[] }>,
  view: (doc: D) => V,
): Promise<AlertsPage<V>> {
  const { meta, docs } = await listPage({
    secret: await serviceSecret(db, 'cursor-hmac'),
    binding: { list, tenant, sort: 'default', filters: filtersFingerprint(request.filters) },
    sort,
    request: { page: request.page, limit: request.limit, cursor: request.cursor },
    fetch: find,
  });
  return { meta: { ...meta, tenant }, data: docs.map(view) };
}
