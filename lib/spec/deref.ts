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
