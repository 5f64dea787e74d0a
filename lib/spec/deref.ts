/** Inlines local `#/...` JSON-pointer references. Our spec has no recursive schemas. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export function resolvePointer(root: Json, pointer: string): Json {
  if (!pointer.startsWith('#/')) throw new Error(`only local references are supported: ${pointer}`);
  let node: Json = root;
  for (const raw of pointer.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || Array.isArray(node) || !(key in node)) {
      throw new Error(`unresolvable reference ${pointer}`);
    }
    node = node[key] as Json;
  }
  return node;
}

export function deref(root: Json, node: Json = root, seen: string[] = []): Json {
  if (Array.isArray(node)) return node.map((item) => deref(root, item, seen));
  if (node === null || typeof node !== 'object') return node;
  const ref = node.$ref;
  if (typeof ref === 'string') {
    if (seen.includes(ref)) throw new Error(`recursive reference ${ref}`);
    return deref(root, resolvePointer(root, ref), [...seen, ref]);
  }
  const out: { [key: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) out[key] = deref(root, value, seen);
  return out;
}

/** `value` and everything under it made read-only (Object.freeze): a table several modules share cannot be changed by one for the others. */
export function deepFreeze<T extends Json>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

const dereferenced = new WeakMap<object, Json>();

/**
 * A whole document with its references inlined, once per document object: the app's plugins, the
 * MCP tables and the tests all read the same document (lib/app/spec.ts `bundledSpec`), and each
 * walk of the 660 KB document cost ~70 ms (issue 39). Frozen, since every caller shares it.
 */
export function derefDocument(root: Json): Json {
  if (root === null || typeof root !== 'object') return root;
  let doc = dereferenced.get(root);
  if (doc === undefined) {
    doc = deepFreeze(deref(root));
    dereferenced.set(root, doc);
  }
  return doc;
}
