export const API_SCOPES = ['read', 'write'] as const;
export type ApiScope = (typeof API_SCOPES)[number];

/** An API key as stored: only its SHA-256 hash, never the key itself. */
export interface ApiKeyRecord {
  /** Public id derived from the hash (key_<16 hex>). */
  _id: string;
  /** First characters of the key, for humans telling keys apart. */
  prefix: string;
  /** Hex SHA-256 of the full key. Unique index. */
  hash: string;
  tenant: string;
  label: string;
  /** What the key may do: `read` (GET operations), `write` (scheduling, cancelling). Absent = both (keys from before scopes). */
  scopes?: ApiScope[];
  createdAt: Date;
  revokedAt: Date | null;
}
