/** The page shape shared by the two alert list operations: one tenant-scoped page of views. */
import { pageMeta, pageWindow, type PageMeta, type PageRequest } from '../shared/pagination.ts';

export interface AlertsPage<T> {
  meta: PageMeta & { tenant: string };
  data: T[];
}

/** Checks the page depth, runs the query on that window and maps the stored documents to views. */
export async function alertsPage<D, V>(
  tenant: string,
  request: PageRequest,
  find: (window: { skip: number; limit: number }) => Promise<{ total: number; docs: D[] }>,
  view: (doc: D) => V,
): Promise<AlertsPage<V>> {
  const { total, docs } = await find(pageWindow(request));
  return { meta: { ...pageMeta(total, request), tenant }, data: docs.map(view) };
}
