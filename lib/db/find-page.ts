import { ObjectId, type Collection, type Document, type Filter, type Sort, type WithId } from 'mongodb';
import { sortSpec, withAfter, type KeysetSort, type PageQuery } from '../shared/keyset.ts';

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

/** Newest first: `createdAt`, then `_id` (the order of the `…_created` indexes). */
export const NEWEST_FIRST = [
  { field: 'createdAt', dir: -1 },
  { field: '_id', dir: -1 },
] as const satisfies KeysetSort;

/**
 * A cursor carries a (date, id) position as JSON (a Date as its ISO text, an ObjectId as its hex): back to the stored
 * types. The cursor is signed (lib/shared/cursor.ts), so a value that does not read is none this service issued.
 */
export const storedDateIdPosition = (q: PageQuery, id: (v: string) => ObjectId | string = (v) => new ObjectId(v)): PageQuery =>
  q.after ? { ...q, after: [new Date(String(q.after[0])), id(String(q.after[1]))] } : q;
