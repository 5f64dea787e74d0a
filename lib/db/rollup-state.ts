/**
 * Which version of each kind of kept totals a store was built by (docs/rollups.md): one entry
 * per kind in `rollupState`. A kind whose entry is missing or of another version is rebuilt by
 * the rollup worker; its reports read the documents meanwhile.
 */
import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from './collections.ts';

export interface RollupState {
  /** The kind's state name. */
  _id: string;
  version: number;
  builtAt: Date;
}

const state = (db: Db): Collection<RollupState> => db.collection<RollupState>(COLLECTIONS.rollupState);

export function readRollupState(db: Db, name: string): Promise<RollupState | null> {
  return state(db).findOne({ _id: name });
}

export async function deleteRollupState(db: Db, name: string): Promise<void> {
  await state(db).deleteOne({ _id: name });
}

export async function writeRollupState(db: Db, name: string, version: number): Promise<void> {
  await state(db).replaceOne({ _id: name }, { version, builtAt: new Date() }, { upsert: true });
}
