import { isDeepStrictEqual } from 'node:util';

/** Documents compared without `lastUpdate`: that is when they were written, not what they say. */
export const sameContent = (stored: object, next: object): boolean => {
  const { lastUpdate: _a, ...a } = stored as { lastUpdate?: unknown };
  const { lastUpdate: _b, ...b } = next as { lastUpdate?: unknown };
  return isDeepStrictEqual(a, b);
};
