/** MongoDB's duplicate key error (E11000): a unique index refused the write. */
export const DUPLICATE_KEY = 11000;

export const isDuplicateKeyError = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === DUPLICATE_KEY;
