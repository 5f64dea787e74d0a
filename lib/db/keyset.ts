import type { Document } from 'mongodb';

/** A sort as an ordered list of fields, the last one unique (the id tie-breaker). */
export type KeysetSort = readonly { field: string; dir: 1 | -1 }[];

export const sortSpec = (sort: KeysetSort): Record<string, 1 | -1> => Object.fromEntries(sort.map((s) => [s.field, s.dir]));

/** The sort key of a document, in sort order. */
export const sortKey = (sort: KeysetSort, doc: Document): (string | number)[] =>
  sort.map((s) => s.field.split('.').reduce<unknown>((v, part) => (v as Document | undefined)?.[part], doc) as string | number);

/**
 * Documents strictly after `key` in `sort` order:
 * (f1 ≷ v1) or (f1 = v1 and f2 ≷ v2) or …, so a page costs the same at any depth
 * and documents inserted or moved meanwhile never shift the ones not touched.
 */
export function afterKey(sort: KeysetSort, key: readonly (string | number)[]): Document {
  const branches: Document[] = sort.map((s, i) => {
    const branch: Document = {};
    for (let j = 0; j < i; j += 1) branch[sort[j]!.field] = key[j];
    branch[s.field] = { [s.dir === 1 ? '$gt' : '$lt']: key[i] };
    return branch;
  });
  return branches.length === 1 ? branches[0]! : { $or: branches };
}
