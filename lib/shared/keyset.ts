/**
 * Keyset paging, in one place: the sort (its last field unique), a document's sort key (what a
 * cursor carries, lib/shared/list-page.ts) and the filter for the documents after a key (what
 * the repositories add, lib/db/find-page.ts).
 */
import type { Document, ObjectId } from 'mongodb';

/** A sort as an ordered list of fields, the last one unique (the id tie-breaker). */
export type KeysetSort = readonly { field: string; dir: 1 | -1 }[];

/**
 * One value of a keyset position: what a cursor's JSON carries (text, numbers), or the stored
 * type a repository turns it back into (a Date, an ObjectId) before it queries.
 */
export type KeyValue = string | number | Date | ObjectId;

export const sortSpec = (sort: KeysetSort): Record<string, 1 | -1> => Object.fromEntries(sort.map((s) => [s.field, s.dir]));

/** The sort key of a document, in sort order. */
export const sortKey = (sort: KeysetSort, doc: Document): (string | number)[] =>
  sort.map((s) => s.field.split('.').reduce<unknown>((v, part) => (v as Document | undefined)?.[part], doc) as string | number);

/**
 * Documents strictly after `key` in `sort` order:
 * (f1 ≷ v1) or (f1 = v1 and f2 ≷ v2) or …, so a page costs the same at any depth
 * and documents inserted or moved meanwhile never shift the ones not touched.
 */
export function afterKey(sort: KeysetSort, key: readonly KeyValue[]): Document {
  const branches: Document[] = sort.map((s, i) => {
    const branch: Document = {};
    for (let j = 0; j < i; j += 1) branch[sort[j]!.field] = key[j];
    branch[s.field] = { [s.dir === 1 ? '$gt' : '$lt']: key[i] };
    return branch;
  });
  return branches.length === 1 ? branches[0]! : { $or: branches };
}

/** A page by offset (`skip`) or after a keyset position (`after`), counting the total only when asked. */
export interface PageQuery {
  sort: KeysetSort;
  skip: number;
  limit: number;
  after?: readonly KeyValue[];
  count: boolean;
}

/** `filter` narrowed to the documents after the page query's keyset position, if it has one. */
export function withAfter(filter: Document, q: PageQuery): Document {
  if (!q.after) return filter;
  const after = afterKey(q.sort, q.after);
  return '$or' in filter || Object.keys(after).some((k) => k in filter) ? { $and: [filter, after] } : { ...filter, ...after };
}
