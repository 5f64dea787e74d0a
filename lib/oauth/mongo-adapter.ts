/**
 * oidc-provider's storage adapter over lib/auth/oauth-records-repo.ts (one collection keyed by kind and
 * the hash of the id). Revocations reach the access-token cache of this process at once
 * (lib/auth/access-tokens.ts), and every other process's through the revocation count, so a
 * revoked token is refused on its next request wherever it is presented.
 */
import type { Db } from 'mongodb';
import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import {
  consumeOAuthRecord,
  countRevocation,
  destroyOAuthRecord,
  findOAuthRecord,
  findOAuthRecordByUid,
  keepOAuthClient,
  revokeOAuthGrant,
  saveOAuthClient,
  saveOAuthRecord,
  saveOAuthRegistrationToken,
} from '../auth/oauth-records-repo.ts';
import { ACCESS_TOKEN_KIND, forgetAccessTokens } from '../auth/access-tokens.ts';

/** What a grant's codes and tokens are stored as (oidc-provider's kinds): what revoking a grant removes. */
const GRANT_KIND = 'Grant';
const CLIENT_KIND = 'Client';
const REGISTRATION_TOKEN_KIND = 'RegistrationAccessToken';
const GRANT_TOKEN_KINDS = [ACCESS_TOKEN_KIND, 'RefreshToken', 'AuthorizationCode'] as const;
/**
 * How long a client registered dynamically (anonymous: RFC 7591) lives without a consent, in seconds: a day to send the
 * carrier to the consent page. The first grant saved for it keeps it (and its registration access token) for good.
 */
export const UNCONSENTED_CLIENT_TTL_S = 24 * 60 * 60;
/** The tokens a grant's revocation must not miss: issued from a code or a refresh token whose grant may be revoked meanwhile. */
const ISSUED_KINDS = new Set<string>([ACCESS_TOKEN_KIND, 'RefreshToken']);

/**
 * Revokes a grant and everything issued under it (what oidc-provider does on a reused code or refresh token):
 * the grant first, so a token saved meanwhile finds it gone (`upsert` below) and is withdrawn.
 */
async function revokeGrant(db: Db, grantId: string): Promise<void> {
  await destroyOAuthRecord(db, GRANT_KIND, grantId);
  for (const kind of GRANT_TOKEN_KINDS) await revokeOAuthGrant(db, kind, grantId);
  await countRevocation(db);
  forgetAccessTokens(db, { grantId });
}

/** The adapter class oidc-provider instantiates once per kind (`new Adapter('AccessToken')`). */
export function mongoAdapter(db: Db): new (kind: string) => Adapter {
  return class MongoAdapter implements Adapter {
    constructor(private readonly kind: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      // Only dynamic registration stores clients here (client ID metadata documents are fetched, never stored): each
      // expires unless a consent keeps it, with its registration access token, saved right after it.
      if (this.kind === CLIENT_KIND) return await saveOAuthClient(db, id, payload, UNCONSENTED_CLIENT_TTL_S);
      if (this.kind === REGISTRATION_TOKEN_KIND) return await saveOAuthRegistrationToken(db, this.kind, id, payload);
      await saveOAuthRecord(db, this.kind, id, payload, expiresIn);
      if (this.kind === GRANT_KIND && typeof payload.clientId === 'string') await keepOAuthClient(db, payload.clientId);
      // A token issued while its grant was being revoked (its code or refresh token used twice at once): saved after the
      // revocation removed the grant's tokens, it would outlive it. Checked after saving, so either the revocation removes it
      // or this check sees the grant gone.
      if (ISSUED_KINDS.has(this.kind) && typeof payload.grantId === 'string' && !(await findOAuthRecord(db, GRANT_KIND, payload.grantId))) {
        await this.destroy(id);
        throw new errors.InvalidGrant('grant revoked');
      }
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

    /**
     * Marks a code or refresh token used, once: oidc-provider reads `consumed` before it calls this, so two requests at
     * once with the same code (or refresh token) both read it unused; only the first to mark it gets tokens. The other is
     * a reuse (RFC 6749 §4.1.2, OAuth 2.1 §4.3.1): refused, and the grant revoked, as oidc-provider does for a later one.
     */
    async consume(id: string): Promise<void> {
      if (await consumeOAuthRecord(db, this.kind, id)) return;
      const grantId = (await findOAuthRecord(db, this.kind, id))?.grantId;
      if (typeof grantId === 'string') await revokeGrant(db, grantId);
      throw new errors.InvalidGrant(`${this.kind === 'RefreshToken' ? 'refresh token' : 'authorization code'} already used`);
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
