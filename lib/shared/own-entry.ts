/**
 * A table's entry for a key read from input (CFDI text, settings), or undefined when the table
 * does not hold it itself: a plain object inherits "constructor", "toString" and "__proto__", so
 * `table[key]` found a function or Object.prototype for those texts.
 */
export function ownEntry<V>(table: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
