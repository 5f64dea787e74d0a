import type { Document } from 'mongodb';
import { invalidQuery } from '../http/api-error.ts';
import { sortKey, type KeysetSort, type PageQuery } from './keyset.ts';
import { decodeCursor, encodeCursor, type CursorBinding } from './cursor.ts';
import { pageWindow, type PageMeta } from './pagination.ts';
import { parseDateTime } from '../time/date-time.ts';

export interface ListRequest {
  page: number;
  limit: number;
  cursor?: string;
}

export interface ListPage<T> {
  /** `syncFrom` (an ISO instant) when the list was asked for one. */
  meta: PageMeta & { nextCursor: string | null; syncFrom?: string };
  docs: T[];
}

/**
 * One page of a list, by `page` (offset, at most 10,000 deep) or by `cursor`
 * (keyset: flat cost at any depth). Either way the page carries the cursor of
 * the next one, so a client can switch to cursors at any page. One extra
 * document is read to know whether there is a next page; the total is counted
 * on the first page of a walk and carried along in the cursor.
 *
 * With `syncFrom` (lib/db/writes-in-flight.ts), the page also says where an incremental sync
 * resumes: computed before the walk's first page is read and carried unchanged to its every
 * page, so a write committed between two pages with an earlier stamp is still at or after it.
 * The cursor carries it as one more number after the sort key (signed like the rest; the
 * payload keeps its documented form).
 */
export async function listPage<T extends Document>(opts: {
  secret: Buffer;
  binding: CursorBinding;
  sort: KeysetSort;
  request: ListRequest;
  fetch: (q: PageQuery) => Promise<{ total: number | null; docs: T[] }>;
  syncFrom?: () => Promise<number>;
}): Promise<ListPage<T>> {
  const { secret, binding, sort, request } = opts;
  const limit = request.limit;
  let total: number;
  let page: number;
  /** Records on the walk's pages before this one. */
  let walked: number;
  let found: T[];
  let syncFrom: number | undefined;
  if (request.cursor !== undefined) {
    // Whether the cursor is this walk's comes first: one that is not is a 404 whatever else is asked.
    const position = decodeCursor(secret, request.cursor, binding);
    if (request.page !== 1) throw invalidQuery('cursor', 'cursor cannot be combined with page: the cursor already says where the next page starts');
    const carried = position.key.length === sort.length + 1 ? position.key[sort.length] : undefined;
    // A cursor issued without it (before it was carried) starts its own: the page is still read after it.
    if (opts.syncFrom) syncFrom = typeof carried === 'number' ? carried : await opts.syncFrom();
    found = (await opts.fetch({ sort, skip: 0, limit: limit + 1, after: position.key.slice(0, sort.length), count: false })).docs;
    total = position.total;
    page = position.page;
    walked = position.walked ?? (page - 1) * limit;
  } else {
    // Before anything of the walk is read (lib/db/writes-in-flight.ts, the proof).
    if (opts.syncFrom) syncFrom = await opts.syncFrom();
    const window = pageWindow(request);
    const res = await opts.fetch({ sort, skip: window.skip, limit: limit + 1, count: true });
    found = res.docs;
    total = res.total ?? 0;
    page = request.page;
    walked = window.skip;
  }
  const hasMore = found.length > limit;
  const docs = hasMore ? found.slice(0, limit) : found;
  const last = docs[docs.length - 1];
  const key = last ? [...sortKey(sort, last), ...(syncFrom === undefined ? [] : [syncFrom])] : [];
  const nextCursor = hasMore && last ? encodeCursor(secret, binding, { key, total, page: page + 1, walked: walked + docs.length }) : null;
  // The pages walked and those left at this limit: a walk may change its limit along the way.
  const pages = walked === (page - 1) * limit ? Math.ceil(total / limit) : page - 1 + Math.ceil(Math.max(total - walked, 0) / limit);
  const meta = { total, page, limit, pages, hasMore, nextCursor };
  return { meta: syncFrom === undefined ? meta : { ...meta, syncFrom: new Date(syncFrom).toISOString() }, docs };
}

/** An ISO 8601 date-time as the stored `lastUpdate` strings are written (UTC, milliseconds). */
export function isoInstant(value: string, name: string): string {
  const date = new Date(parseDateTime(value));
  if (Number.isNaN(date.getTime())) throw invalidQuery(name, `${name} must be a valid date-time (ISO 8601)`);
  // 9999-12-31T23:59:59-12:00 is in year 10000, written `+010000-…`, which sorts before every stored instant as text:
  // compared as text, it would select everything. Nothing stored is later than the last instant of year 9999.
  return date.getTime() > LAST_FOUR_DIGIT_INSTANT ? new Date(LAST_FOUR_DIGIT_INSTANT).toISOString() : date.toISOString();
}

const LAST_FOUR_DIGIT_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
