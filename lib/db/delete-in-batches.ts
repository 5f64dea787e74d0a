/**
 * Deletes what a filter matches a batch of ids at a time. One `deleteMany` over a tenant's
 * hundreds of thousands of documents holds every one of them in the embedded engine's heap until
 * it commits (a 300k store's `npm run seed -- --drop` ran it out of memory); batches keep each
 * commit small on both engines. Not atomic, like `deleteMany` itself: a crash leaves a part.
 */
import type { Collection, Document, Filter } from 'mongodb';

export async function deleteInBatches<T extends Document>(coll: Collection<T>, filter: Filter<T>, batch = 5000): Promise<number> {
  let deleted = 0;
  for (;;) {
    const ids = (await coll.find(filter, { projection: { _id: 1 }, limit: batch }).toArray()).map((d) => d._id);
    if (!ids.length) return deleted;
    // The ids beside the filter's own fields, not under an $and: the embedded engine looks a top-level
    // _id $in up by key, where under an $and it read every document the filter matches and compared
    // each with every id of the batch (20.9 s for one batch of a 20k tenant's tax findings; quadratic overall).
    const byIds = '_id' in filter ? { $and: [filter, { _id: { $in: ids } }] } : { ...filter, _id: { $in: ids } };
    const r = await coll.deleteMany(byIds as Filter<T>, { writeConcern: { j: true } });
    deleted += r.deletedCount;
  }
}
