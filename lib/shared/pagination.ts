import { badRequest } from '../http/api-error.ts';

/** Deepest offset a page may reach: skip-based paging beyond it is slow on any database. */
export const MAX_PAGE_DEPTH = 10_000;

export interface PageRequest { page: number; limit: number }

export interface PageMeta {
  total: number;
  page: number;
  limit: number;
  pages: number;
  hasMore: boolean;
}

export function pageWindow({ page, limit }: PageRequest): { skip: number; limit: number } {
  if (page * limit > MAX_PAGE_DEPTH) {
    throw badRequest('Invalid query parameter', [`page × limit must not exceed ${MAX_PAGE_DEPTH}; narrow the filters instead`]);
  }
  return { skip: (page - 1) * limit, limit };
}

export function pageMeta(total: number, { page, limit }: PageRequest): PageMeta {
  return { total, page, limit, pages: Math.ceil(total / limit), hasMore: page * limit < total };
}
