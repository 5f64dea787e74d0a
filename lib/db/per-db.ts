import type { Db } from 'mongodb';

/**
 * One `T` per Db handle, made on first use: what this process keeps about a database (its
 * caches) follows the handle, and a test's fresh database starts empty.
 */
export function perDb<T>(create: () => T): (db: Db) => T {
  const made = new WeakMap<Db, T>();
  return (db) => {
    let value = made.get(db);
    if (value === undefined) {
      value = create();
      made.set(db, value);
    }
    return value;
  };
}
