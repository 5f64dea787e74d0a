/**
 * Deletes what a filter matches a batch of ids at a time. One `deleteMany` over a tenant's
 * hundreds of thousands of documents holds every one of them in the embedded engine's heap until
 * it commits (a 300k store's `npm run seed -- --drop` ran it out of memory); batches keep each
 * commit small on both engines. Not atomic, like `deleteMany` itself: a crash leaves a part.
 *
 * The ids come from one cursor, each batch deleted as it is read (both engines skip a document
 * deleted before its batch, and these are deleted after theirs): a find per batch made the embedded
 * engine gather and order every remaining match each time, quadratic in the documents (forgetting a
 * 300k tenant's open spans took 89 s, most of it those finds). A pass that found anything is followed
 * by another, for what was written meanwhile; a pass that finds nothing ends.
 */
import type { Collection, Document, Filter } from 'mongodb';

export async function deleteInBatches<T extends Document>(coll: Collection<T>, filter: Filter<T>, batch = 5000): Promise<number> {
  const deleteIds = async (ids: unknown[]): Promise<number> => {
    // The ids beside the filter's own fields, not under an $and: the embedded engine looks a top-level
    // _id $in up by key, where under an $and it read every document the filter matches and compared
    // each with every id of the batch (20.9 s for one batch of a 20k tenant's tax findings; quadratic overall).
    const byIds = '_id' in filter ? { $and: [filter, { _id: { $in: ids } }] } : { ...filter, _id: { $in: ids } };
    return (await coll.deleteMany(byIds as Filter<T>, { writeConcern: { j: true } })).deletedCount;
  };
  let deleted = 0;
  for (;;) {
    let found = 0;
    let ids: unknown[] = [];
    for await (const d of coll.find(filter, { projection: { _id: 1 }, batchSize: batch })) {
      ids.push(d._id);
      if (ids.length < batch) continue;
      found += ids.length;
      deleted += await deleteIds(ids);
      ids = [];
    }
    if (ids.length) {
      found += ids.length;
      deleted += await deleteIds(ids);
    }
    if (!found) return deleted;
  }
}
