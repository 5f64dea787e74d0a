import { invalidQuery } from '../http/api-error.ts';

/** Last page a list serves (the spec's `page` maximum): skip-based paging deeper is slow on any database. */
export const MAX_PAGE = 500;

export interface PageRequest {
  page: number;
  limit: number;
}

export interface PageMeta {
  total: number;
  page: number;
  limit: number;
  pages: number;
  hasMore: boolean;
}

export function pageWindow({ page, limit }: PageRequest): { skip: number; limit: number } {
  // The spec caps `page`, so validation already answered 400; this guards other callers.
  if (page > MAX_PAGE) throw invalidQuery('page', `page must be an integer between 1 and ${MAX_PAGE}`);
  return { skip: (page - 1) * limit, limit };
}

export function pageMeta(total: number, { page, limit }: PageRequest): PageMeta {
  return { total, page, limit, pages: Math.ceil(total / limit), hasMore: page * limit < total };
}
