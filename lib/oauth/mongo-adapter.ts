/**
 * oidc-provider's storage adapter over lib/auth/oauth-records-repo.ts (one collection keyed by kind and
 * the hash of the id). Revocations reach the access-token cache of this process at once
 * (lib/auth/access-tokens.ts), and every other process's through the revocation count, so a
 * revoked token is refused on its next request wherever it is presented.
 */
import type { Db } from 'mongodb';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import {
  consumeOAuthRecord,
  countRevocation,
  destroyOAuthRecord,
  findOAuthRecord,
  findOAuthRecordByUid,
  revokeOAuthGrant,
  saveOAuthRecord,
} from '../auth/oauth-records-repo.ts';
import { ACCESS_TOKEN_KIND, forgetAccessTokens } from '../auth/access-tokens.ts';

/** The adapter class oidc-provider instantiates once per kind (`new Adapter('AccessToken')`). */
export function mongoAdapter(db: Db): new (kind: string) => Adapter {
  return class MongoAdapter implements Adapter {
    constructor(private readonly kind: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      await saveOAuthRecord(db, this.kind, id, payload, expiresIn);
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      return await findOAuthRecord(db, this.kind, id);
    }

    /** The device flow is off: no user codes. */
    async findByUserCode(): Promise<undefined> {
      return undefined;
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return await findOAuthRecordByUid(db, this.kind, uid);
    }

    async consume(id: string): Promise<void> {
      await consumeOAuthRecord(db, this.kind, id);
    }

    async destroy(id: string): Promise<void> {
      await destroyOAuthRecord(db, this.kind, id);
      if (this.kind === ACCESS_TOKEN_KIND) {
        await countRevocation(db);
        forgetAccessTokens(db, { token: id });
      }
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await revokeOAuthGrant(db, this.kind, grantId);
      if (this.kind === ACCESS_TOKEN_KIND) {
        await countRevocation(db);
        forgetAccessTokens(db, { grantId });
      }
    }
  };
}
