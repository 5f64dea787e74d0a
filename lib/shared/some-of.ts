/**
 * A list named in a message, bounded: the first few items and how many more
 * ("3, 19, 27 (and 19,996 more)"). A report's reason repeated for each of a
 * request's rows must not name every other row, or its size grows with rows².
 */
export const SOME_OF_MAX = 5;

const count = new Intl.NumberFormat('en-US');

export function someOf(items: readonly (string | number)[], max = SOME_OF_MAX): string {
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown} (and ${count.format(items.length - max)} more)` : shown;
}
