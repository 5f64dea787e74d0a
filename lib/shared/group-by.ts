/** `xs` grouped by `keyOf`, each group in the order given and the groups in the order first seen. */
export function groupBy<T>(xs: readonly T[], keyOf: (x: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const x of xs) {
    const key = keyOf(x);
    let group = out.get(key);
    if (!group) out.set(key, (group = []));
    group.push(x);
  }
  return out;
}
