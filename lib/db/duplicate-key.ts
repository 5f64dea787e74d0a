/** Writes a unique index may refuse (MongoDB's duplicate key error, E11000). */
import type { Collection, Document, OptionalUnlessRequiredId } from 'mongodb';

export const DUPLICATE_KEY = 11000;

export const isDuplicateKeyError = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === DUPLICATE_KEY;

/** Inserts `doc` (majority write); false when a unique index already holds its key, so a repeated insert is harmless. */
export async function insertUnlessDuplicate<T extends Document>(coll: Collection<T>, doc: OptionalUnlessRequiredId<T>): Promise<boolean> {
  try {
    await coll.insertOne(doc, { writeConcern: { w: 'majority' } });
    return true;
  } catch (err) {
    if (isDuplicateKeyError(err)) return false;
    throw err;
  }
}
