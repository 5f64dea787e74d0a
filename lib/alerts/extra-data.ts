/**
 * `extraData` is the client's free-form data: any key, including ones MongoDB
 * would read as operators or paths (`$x`, `a.b`). It is stored serialised, so
 * nothing in it can ever reach a query or an update as a field name, and it
 * comes back exactly as sent. Documents written before this stored the object
 * itself; both forms read back.
 */
export type StoredExtraData = string | Record<string, unknown>;

export const storeExtraData = (extra: Record<string, unknown>): string => JSON.stringify(extra);

export function readExtraData(stored: StoredExtraData | null | undefined): Record<string, unknown> {
  if (typeof stored === 'string') return JSON.parse(stored) as Record<string, unknown>;
  return stored ?? {};
}
