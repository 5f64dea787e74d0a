/**
 * Which index of lib/service-indexes.ts (each area's own) real MongoDB would use for a command the service sent:
 * the query's equality fields, then its sort, must be a prefix of one index (equality, sort,
 * range order), and that index starts with the tenant. The embedded engine ignores non-unique
 * indexes, so only this check shows a query that would scan a collection in production.
 */
import type { Document, IndexDescription } from 'mongodb';

export interface QueryShape {
  collection: string;
  /** find / aggregate / count / distinct, plus `$lookup` for the foreign side of a join. */
  command: string;
  equality: string[];
  sort: Array<[string, 1 | -1]>;
  range: string[];
}

export interface Verdict {
  ok: boolean;
  shape: QueryShape;
  /** Name of the index that serves the shape, when ok. */
  index?: string;
  /** What is missing, when not ok: the index that would serve it. */
  problem?: string;
}

const RANGE_OPS = new Set(['$gt', '$gte', '$lt', '$lte']);

function isPlainObject(v: unknown): v is Document {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

const isOperatorObject = (v: unknown): v is Document => isPlainObject(v) && Object.keys(v).length > 0 && Object.keys(v).every((k) => k.startsWith('$'));

/** Equality and range fields of a query filter; `$or`, `$expr`, `$ne`, `$exists`… narrow nothing an index could seek. */
export function filterFields(filter: Document, prefix = ''): { equality: string[]; range: string[] } {
  const equality = new Set<string>();
  const range = new Set<string>();
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(value)) {
      for (const part of value) {
        const sub = filterFields(part as Document, prefix);
        sub.equality.forEach((f) => equality.add(f));
        sub.range.forEach((f) => range.add(f));
      }
      continue;
    }
    if (key.startsWith('$')) continue;
    const field = prefix + key;
    // `field: null` (missing or null) is how Agenda marks a job's state: a residual test on the few
    // documents the tenant's index range returns, not a seek worth an index of its own.
    if (value === null) continue;
    if (!isOperatorObject(value)) {
      equality.add(field);
      continue;
    }
    if (isPlainObject(value.$elemMatch) && !isOperatorObject(value.$elemMatch)) {
      const sub = filterFields(value.$elemMatch, `${field}.`);
      sub.equality.forEach((f) => equality.add(f));
      sub.range.forEach((f) => range.add(f));
    }
    if ('$eq' in value || '$in' in value) equality.add(field);
    else if (Object.keys(value).some((op) => RANGE_OPS.has(op))) range.add(field);
  }
  for (const f of equality) range.delete(f);
  return { equality: [...equality], range: [...range] };
}

function sortOf(sort: unknown): Array<[string, 1 | -1]> {
  // The driver sends a find's sort as a Map.
  const entries = sort instanceof Map ? [...sort.entries()] : isPlainObject(sort) ? Object.entries(sort) : [];
  return entries.filter(([k]) => k !== '$natural').map(([k, v]) => [k, Number(v) < 0 ? -1 : 1] as [string, 1 | -1]);
}

/** The query shapes of one command the driver sent (empty for commands that read nothing by query). */
export function shapesOf(commandName: string, command: Document): QueryShape[] {
  const collection = String(command[commandName]);
  const shapes: QueryShape[] = [];
  if (commandName === 'find' || commandName === 'count' || commandName === 'distinct') {
    const filter = (commandName === 'find' ? command.filter : command.query) ?? {};
    shapes.push({ collection, command: commandName, ...filterFields(filter), sort: sortOf(command.sort) });
  } else if (commandName === 'aggregate') {
    const pipeline = (command.pipeline ?? []) as Document[];
    const first = pipeline[0];
    const match = first && isPlainObject(first.$match) ? first.$match : {};
    const sort = match === first?.$match && pipeline[1]?.$sort ? sortOf(pipeline[1].$sort) : [];
    shapes.push({ collection, command: commandName, ...filterFields(match), sort });
    for (const stage of pipeline) collectLookups(stage, shapes);
  }
  return shapes;
}

/** `$lookup`s anywhere in a pipeline (also inside `$facet`): the foreign field is sought once per input document. */
function collectLookups(stage: Document, out: QueryShape[]): void {
  const lookup = stage.$lookup as Document | undefined;
  if (lookup && typeof lookup.foreignField === 'string') {
    out.push({ collection: String(lookup.from), command: '$lookup', equality: [lookup.foreignField], sort: [], range: [] });
  }
  if (isPlainObject(stage.$facet)) {
    for (const sub of Object.values(stage.$facet)) for (const s of sub as Document[]) collectLookups(s, out);
  }
}

const keysOf = (index: IndexDescription): Array<[string, 1 | -1]> => Object.entries(index.key as Record<string, number>).map(([k, v]) => [k, v < 0 ? -1 : 1]);

/**
 * Whether one index serves the shape: its first |equality| keys are the equality fields (any
 * order), the next keys are the sort in order (all directions as declared, or all reversed), and
 * its first key is the tenant field. An equality on `_id` is served by the `_id` index.
 */
export function checkShape(shape: QueryShape, indexes: readonly IndexDescription[], tenantField: string | null): Verdict {
  if (shape.equality.includes('_id')) return { ok: true, shape, index: '_id_' };
  const need = neededIndex(shape, tenantField);
  if (tenantField && !shape.equality.includes(tenantField) && shape.command !== '$lookup') {
    return { ok: false, shape, problem: `the query is not scoped by tenant (${tenantField}); it needs ${need}` };
  }
  for (const index of indexes) {
    const keys = keysOf(index);
    if (tenantField && keys[0]?.[0] !== tenantField && shape.command !== '$lookup') continue;
    const eq = new Set(shape.equality);
    const head = keys.slice(0, eq.size);
    if (head.length !== eq.size || !head.every(([k]) => eq.has(k))) continue;
    const next = keys.slice(eq.size, eq.size + shape.sort.length);
    if (next.length !== shape.sort.length) continue;
    const same = next.every(([k, d], i) => k === shape.sort[i]![0] && d === shape.sort[i]![1]);
    const reversed = next.every(([k, d], i) => k === shape.sort[i]![0] && d === -shape.sort[i]![1]);
    if (same || reversed) return { ok: true, shape, index: index.name ?? JSON.stringify(index.key) };
  }
  return { ok: false, shape, problem: `no index has the prefix ${need}` };
}

/** The index key that would serve the shape (equality, sort, range), tenant first. */
export function neededIndex(shape: QueryShape, tenantField: string | null): string {
  const key: Record<string, number> = {};
  if (tenantField && shape.command !== '$lookup') key[tenantField] = 1;
  for (const f of shape.equality) key[f] = 1;
  for (const [f, d] of shape.sort) key[f] = d;
  for (const f of shape.range) if (!(f in key)) key[f] = 1;
  return JSON.stringify(key);
}
