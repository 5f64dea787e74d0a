/**
 * The rows of an aggregation pipeline, streamed in bounded chunks whatever the
 * engine does with `batchSize`.
 *
 * The embedded engine (mongo-java-server) answers an `aggregate` with every
 * result row in its first batch, whatever `cursor.batchSize` asks: a 366-day
 * audit over 20,000 trips arrives as one ~10 MB reply, and the driver keeps a
 * parsed handle per row of a batch until the batch is consumed. `find` cursors
 * it does batch. So the documents the pipeline's leading `$match` selects are
 * read as `_id`s through a `find` cursor (same filter, `batchSize` ids per
 * round trip), and the whole pipeline runs once per chunk of those ids, with
 * `_id: {$in: chunk}` added to its `$match` (a lookup by key on both engines).
 * Filtering and grouping stay in the database; each round trip carries at most
 * `chunkSize` rows. Rows come in the `find` order, which on the embedded
 * engine is its natural (key) order, as the single `aggregate` returned them.
 */
import type { Collection, Document, Filter } from 'mongodb';

export interface ChunkedAggregateOptions {
  maxTimeMS: number;
  /** Documents per chunk (and `_id`s per `find` batch). */
  chunkSize: number;
}

export async function* aggregateInChunks<T extends Document, S extends Document = Document>(collection: Collection<S>, pipeline: readonly Document[], options: ChunkedAggregateOptions): AsyncGenerator<T, void, undefined> {
  const [first, ...rest] = pipeline;
  const match = first?.$match as Document | undefined;
  if (!first || !match || Object.keys(first).length !== 1) throw new Error('aggregateInChunks: the pipeline must start with a $match stage');
  if ('_id' in match) throw new Error('aggregateInChunks: the leading $match must not constrain _id');
  const { maxTimeMS, chunkSize } = options;
  const chunk = (ids: unknown[]) => collection.aggregate<T>([{ $match: { ...match, _id: { $in: ids } } }, ...rest], { maxTimeMS, batchSize: chunkSize });

  let ids: unknown[] = [];
  for await (const doc of collection.find(match as Filter<S>, { projection: { _id: 1 }, batchSize: chunkSize, maxTimeMS })) {
    ids.push(doc._id);
    if (ids.length === chunkSize) {
      yield* chunk(ids);
      ids = [];
    }
  }
  if (ids.length > 0) yield* chunk(ids);
}
