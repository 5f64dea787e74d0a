import type { Collection, Document, Filter, Sort, WithId } from 'mongodb';
import { sortSpec, withAfter, type PageQuery } from '../shared/keyset.ts';

export interface PageWindow {
  skip: number;
  limit: number;
}

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
    coll
      .find(withAfter(filter, q) as Filter<T>, { maxTimeMS, ...(projection ? { projection } : {}) })
      .sort(sortSpec(q.sort))
      .skip(q.skip)
      .limit(q.limit)
      .toArray(),
  ]);
  return { total, docs };
}
