/** The indexes of `oauthRecords` (lib/auth/oauth-records-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs } from '../db/indexes.ts';

export const OAUTH_RECORD_INDEXES: IndexSpecs = {
  [COLLECTIONS.oauthRecords]: [
    // Codes, tokens, sessions and interactions go when they expire, and a registered client never consented to (24 h); a
    // consented client and grants carry no expiry.
    { key: { expiresAt: 1 }, name: 'expires_ttl', expireAfterSeconds: 0 },
    // Revoking a grant revokes every token issued under it (RFC 7009 §2.1; a code used twice).
    { key: { grantId: 1, kind: 1 }, name: 'grant_kind' },
    // A browser session found by the uid of its interaction.
    { key: { uid: 1, kind: 1 }, name: 'uid_kind' },
  ],
};
