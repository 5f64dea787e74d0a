/**
 * Keeps exactly a computed set of documents as what one scope of a collection holds (a run of a
 * tenant's days of kept entries): reads what the scope holds first, upserts by `_id` only the
 * documents that changed, then deletes the ones no longer computed. Reading first, not after the
 * writes, means a rebuild into an emptied collection reads back nothing it wrote, and a settle of
 * a day where one invoice changed rewrites that invoice's entries only. A write racing it marks
 * its days again (docs/rollups.md "How the days stay right"), so what this deletes or overwrites
 * from a read a moment old is recomputed by the next settle.
 */
import type { Collection, Filter } from 'mongodb';
import { sameContent } from '../shared/same-content.ts';
import { readAll } from './read-all.ts';

/** Documents written, or ids deleted, per command. */
const BATCH = 1000;

export async function replaceScoped<T extends { _id: string; tenant: string }>(
  coll: Collection<T>,
  tenant: string,
  scope: Filter<T>,
  docs: readonly T[],
  maxTimeMS: number,
): Promise<void> {
  const stored = new Map<string, T>();
  for (const d of await readAll(coll.find(scope, { maxTimeMS, batchSize: 5000 }))) stored.set(d._id, d as T);
  const changed = docs.filter((d) => {
    const s = stored.get(d._id);
    return !s || !sameContent(s, d);
  });
  // Journaled: the engine holds a write's pages until a commit, and a rebuild writes a year at a time; waiting for each
  // batch's commit keeps that bounded (on MongoDB, the usual durable write).
  const writeConcern = { writeConcern: { j: true } };
  // By _id alone (it holds the tenant): the embedded engine finds an upsert's target by its _id index only when the filter is just _id.
  for (let i = 0; i < changed.length; i += BATCH)
    await coll.bulkWrite(
      changed.slice(i, i + BATCH).map((d) => ({
        replaceOne: { filter: { _id: d._id } as Filter<T>, replacement: d, upsert: true },
      })),
      { ordered: false, ...writeConcern },
    );
  const current = new Set(docs.map((d) => d._id));
  const gone = [...stored.keys()].filter((id) => !current.has(id));
  for (let i = 0; i < gone.length; i += BATCH) await coll.deleteMany({ _id: { $in: gone.slice(i, i + BATCH) }, tenant } as Filter<T>, writeConcern);
}
