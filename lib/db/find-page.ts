import type { Collection, Document, Filter, Sort, WithId } from 'mongodb';
import { afterKey, sortSpec, type KeysetSort } from './keyset.ts';

export interface PageWindow { skip: number; limit: number }

/** One page of a filtered, sorted collection plus the total count, both bounded by maxTimeMS. */
export async function findPage<T extends Document>(
  coll: Collection<T>,
  filter: Filter<T>,
  sort: Sort,
  window: PageWindow,
  maxTimeMS: number,
): Promise<{ total: number; docs: WithId<T>[] }> {
  const [total, docs] = await Promise.all([
    coll.countDocuments(filter, { maxTimeMS }),
    coll.find(filter, { maxTimeMS }).sort(sort).skip(window.skip).limit(window.limit).toArray(),
  ]);
  return { total, docs };
}

/** A page by offset (`skip`) or after a keyset position (`after`), counting the total only when asked. */
export interface PageQuery {
  sort: KeysetSort;
  skip: number;
  limit: number;
  after?: readonly (string | number)[];
  count: boolean;
}

/** `filter` narrowed to the documents after the page query's keyset position, if it has one. */
export function withAfter(filter: Document, q: PageQuery): Document {
  if (!q.after) return filter;
  const after = afterKey(q.sort, q.after);
  return '$or' in filter || Object.keys(after).some((k) => k in filter) ? { $and: [filter, after] } : { ...filter, ...after };
}

/** `projection` leaves out of the page what must not reach clients (e.g. stored derived fields). */
export async function findSortedPage<T extends Document>(
  coll: Collection<T>,
  filter: Filter<T>,
  q: PageQuery,
  maxTimeMS: number,
  projection?: Document,
): Promise<{ total: number | null; docs: WithId<T>[] }> {
  const [total, docs] = await Promise.all([
    q.count ? coll.countDocuments(filter, { maxTimeMS }) : null,
    coll.find(withAfter(filter, q) as Filter<T>, { maxTimeMS, ...(projection ? { projection } : {}) }).sort(sortSpec(q.sort)).skip(q.skip).limit(q.limit).toArray(),
  ]);
  return { total, docs };
}
