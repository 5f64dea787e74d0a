import type { Collection, Document, Filter, Sort, WithId } from 'mongodb';

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
