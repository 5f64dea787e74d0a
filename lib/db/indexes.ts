import type { Db, IndexDescription } from 'mongodb';

/**
 * The indexes of some collections, by collection name, in creation order. Each area declares the
 * indexes of the collections it owns beside its repository (lib/<area>/*-indexes.ts); the service's
 * whole set is composed above lib/db (lib/service-indexes.ts), so the ground floor knows no area's
 * query shapes. Tenant first, then equality, sort, range (ESR): real MongoDB needs them to avoid
 * collection scans; the embedded engine's on-disk backend implements them (scripts/embedded-mongo
 * SecondaryIndex), its in-memory backend ignores them.
 */
export type IndexSpecs = Readonly<Record<string, readonly IndexDescription[]>>;

/** Several areas' specs as one, in argument order. A collection declared twice throws: one would silently replace the other. */
export function joinIndexSpecs(...specs: readonly IndexSpecs[]): IndexSpecs {
  const joined: Record<string, readonly IndexDescription[]> = {};
  for (const spec of specs) {
    for (const [collection, indexes] of Object.entries(spec)) {
      if (Object.hasOwn(joined, collection)) throw new Error(`the indexes of ${collection} are declared twice`);
      joined[collection] = indexes;
    }
  }
  return joined;
}

/**
 * Index names an area no longer declares, by collection: a store created before keeps them (and
 * keeps paying for them on every write) until they are dropped at start (`dropRetiredIndexes`).
 */
export type RetiredIndexes = Readonly<Record<string, readonly string[]>>;

/** Drops the retired indexes a store still has (idempotent: a missing collection or index is nothing to do). Answers what it dropped. */
export async function dropRetiredIndexes(db: Db, retired: RetiredIndexes): Promise<string[]> {
  const dropped: string[] = [];
  for (const [collection, names] of Object.entries(retired)) {
    if (!names.length) continue;
    const present = new Set(
      (
        await db
          .collection(collection)
          .listIndexes()
          .toArray()
          .catch(() => [])
      ).map((i: { name?: string }) => i.name),
    );
    for (const name of names) {
      if (!present.has(name)) continue;
      await db.collection(collection).dropIndex(name);
      dropped.push(`${collection}.${name}`);
    }
  }
  return dropped;
}

/** Creates the indexes of `specs`, collection by collection in their order (idempotent on the server). */
export async function ensureIndexSpecs(db: Db, specs: IndexSpecs): Promise<void> {
  for (const [collection, indexes] of Object.entries(specs)) {
    if (indexes.length) await db.collection(collection).createIndexes([...indexes]);
  }
}

/**
 * An `ensure(db)` that creates the indexes of `specs` once per Db handle
 * (idempotent on the server); a failed attempt is forgotten, so the next call
 * tries again. For areas whose writes rest on a unique index even where
 * the service's start-up (lib/service-indexes.ts) never ran.
 */
export function ensureIndexesOnce(specs: IndexSpecs): (db: Db) => Promise<void> {
  const ensured = new WeakMap<Db, Promise<void>>();
  return (db) => {
    let p = ensured.get(db);
    if (!p) {
      p = ensureIndexSpecs(db, specs);
      p.catch(() => ensured.delete(db));
      ensured.set(db, p);
    }
    return p;
  };
}
