/**
 * The OAuth authorization server's storage (lib/oauth/provider.ts hands it to oidc-provider as its
 * adapter): one collection, one record per (kind, id) — Client, Grant, Session, Interaction,
 * AuthorizationCode, AccessToken, RefreshToken, RegistrationAccessToken… Every record is stored
 * under the SHA-256 of its id and without the id itself (oidc-provider's `jti`), so the database
 * holds no usable code or token: whoever reads it cannot present one. Records expire with their
 * `expiresAt` (TTL index); a lookup also refuses an expired one the TTL monitor has not removed yet.
 */
import { createHash } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';

/** What oidc-provider stores for a record (its own shape, opaque here but for the fields below). */
export type OAuthPayload = Record<string, unknown> & { grantId?: string; uid?: string; consumed?: number; jti?: string };

export interface OAuthRecord {
  /** `${kind}:${sha256 hex of the id}`. */
  _id: string;
  kind: string;
  /** The payload as JSON, without its `jti` (oidc-provider's client metadata may carry keys MongoDB treats specially). */
  payload: string;
  expiresAt: Date | null;
  grantId?: string;
  /** SHA-256 of a session's uid. */
  uid?: string;
  consumedAt?: Date;
  /** The revocation counter's value (its one record: REVOCATIONS_ID). */
  generation?: number;
  /** A dynamically registered client's record: the stored id of its registration access token (kept and expiring with it). */
  registrationToken?: string;
}

export const oauthRecords = (db: Db): Collection<OAuthRecord> => db.collection<OAuthRecord>(COLLECTIONS.oauthRecords);

const sha256 = (value: string): string => createHash('sha256').update(value, 'utf8').digest('hex');

/** The stored id of a record: its kind and the hash of its id. */
export const oauthRecordId = (kind: string, id: string): string => `${kind}:${sha256(id)}`;

/**
 * One record counts the revocations an access token's validity depends on (an API key revoked, a
 * token or grant revoked), from any process: a token's answer cached by an instance is reused only
 * while the count is what it was when cached (lib/auth/access-tokens.ts), so a revocation anywhere
 * takes effect at once everywhere for one read of this record by id per request.
 */
const REVOCATIONS_ID = 'Revocations:count';

/** Counts one revocation (after it was written, so whoever reads the new count sees it). */
export async function countRevocation(db: Db): Promise<void> {
  await oauthRecords(db).updateOne(
    { _id: REVOCATIONS_ID },
    { $inc: { generation: 1 }, $setOnInsert: { kind: 'Revocations', payload: '{}', expiresAt: null } },
    { upsert: true },
  );
}

/** The revocations counted so far (0: none yet). */
export async function revocationCount(db: Db): Promise<number> {
  const record = await oauthRecords(db).findOne({ _id: REVOCATIONS_ID }, { projection: { generation: 1 } });
  return record?.generation ?? 0;
}

/** oidc-provider's kind of a client's record. */
const CLIENT_KIND = 'Client';

const live = (now: Date) => ({ $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] });

function revive(record: OAuthRecord | null, id: string): OAuthPayload | undefined {
  if (!record) return undefined;
  const payload = JSON.parse(record.payload) as OAuthPayload;
  return { ...payload, jti: id };
}

/** Stores (or replaces) a record; `expiresInS` undefined: it never expires (clients, grants without one). */
export async function saveOAuthRecord(
  db: Db,
  kind: string,
  id: string,
  payload: OAuthPayload,
  expiresInS: number | undefined,
  now = new Date(),
): Promise<void> {
  await writeOAuthRecord(db, kind, id, payload, expiresInS ? new Date(now.getTime() + expiresInS * 1000) : null);
}

async function writeOAuthRecord(db: Db, kind: string, id: string, payload: OAuthPayload, expiresAt: Date | null): Promise<void> {
  const { jti: _clear, ...kept } = payload;
  const record: Omit<OAuthRecord, '_id'> = {
    kind,
    payload: JSON.stringify(kept),
    expiresAt,
    ...(typeof payload.grantId === 'string' ? { grantId: payload.grantId } : {}),
    ...(typeof payload.uid === 'string' ? { uid: sha256(payload.uid) } : {}),
  };
  await oauthRecords(db).replaceOne({ _id: oauthRecordId(kind, id) }, record, { upsert: true });
}

/**
 * Stores a client registered dynamically (RFC 7591), expiring in `expiresInS` until a consent keeps it
 * (`keepOAuthClient`): registration is anonymous, and a client nobody authorised must not stay forever. Saved
 * again (its metadata changed), a record keeps its expiry: a kept client stays kept.
 */
export async function saveOAuthClient(db: Db, id: string, payload: OAuthPayload, expiresInS: number, now = new Date()): Promise<void> {
  const { jti: _clear, ...kept } = payload;
  await oauthRecords(db).updateOne(
    { _id: oauthRecordId(CLIENT_KIND, id) },
    { $set: { kind: CLIENT_KIND, payload: JSON.stringify(kept) }, $setOnInsert: { expiresAt: new Date(now.getTime() + expiresInS * 1000) } },
    { upsert: true },
  );
}

/**
 * Stores a client's registration access token (RFC 7592) with its client's expiry, and names it on the client's
 * record, so that the consent keeping the client keeps it too (with no client, no expiry: as any other record).
 */
export async function saveOAuthRegistrationToken(db: Db, kind: string, id: string, payload: OAuthPayload, now = new Date()): Promise<void> {
  const client =
    typeof payload.clientId === 'string'
      ? await oauthRecords(db).findOneAndUpdate(
          { _id: oauthRecordId(CLIENT_KIND, payload.clientId), ...live(now) },
          { $set: { registrationToken: oauthRecordId(kind, id) } },
          { projection: { expiresAt: 1 } },
        )
      : null;
  await writeOAuthRecord(db, kind, id, payload, client?.expiresAt ?? null);
}

/** A consent was given to this client: if it was registered dynamically, it and its registration access token no longer expire. */
export async function keepOAuthClient(db: Db, clientId: string, now = new Date()): Promise<void> {
  const client = await oauthRecords(db).findOneAndUpdate(
    { _id: oauthRecordId(CLIENT_KIND, clientId), expiresAt: { $gt: now } },
    { $set: { expiresAt: null } },
    { projection: { registrationToken: 1 } },
  );
  if (client?.registrationToken) await oauthRecords(db).updateOne({ _id: client.registrationToken }, { $set: { expiresAt: null } });
}

/** A live record's payload, with its id back as `jti` (and the time it was consumed, for codes and refresh tokens). */
export async function findOAuthRecord(db: Db, kind: string, id: string, now = new Date()): Promise<OAuthPayload | undefined> {
  const record = await oauthRecords(db).findOne({ _id: oauthRecordId(kind, id), ...live(now) });
  const payload = revive(record, id);
  if (payload && record?.consumedAt) payload.consumed = Math.floor(record.consumedAt.getTime() / 1000);
  return payload;
}

/** A live session by the uid of its interaction. */
export async function findOAuthRecordByUid(db: Db, kind: string, uid: string, now = new Date()): Promise<OAuthPayload | undefined> {
  const record = await oauthRecords(db).findOne({ uid: sha256(uid), kind, ...live(now) });
  if (!record) return undefined;
  const payload = JSON.parse(record.payload) as OAuthPayload;
  // The session's own id is not stored: oidc-provider knows it only from the browser's cookie, and finds by uid only to read.
  return { ...payload, uid };
}

/** Marks a code or refresh token used (a second use revokes its grant: oidc-provider checks `consumed`). */
/** Marks a code or refresh token used, once: answers whether this call marked it (false: used already, or unknown). */
export async function consumeOAuthRecord(db: Db, kind: string, id: string, now = new Date()): Promise<boolean> {
  const marked = await oauthRecords(db).updateOne({ _id: oauthRecordId(kind, id), consumedAt: { $exists: false } }, { $set: { consumedAt: now } });
  return marked.modifiedCount === 1;
}

export async function destroyOAuthRecord(db: Db, kind: string, id: string): Promise<void> {
  await oauthRecords(db).deleteOne({ _id: oauthRecordId(kind, id) });
}

/** Removes every record of this kind issued under a grant. */
export async function revokeOAuthGrant(db: Db, kind: string, grantId: string): Promise<void> {
  await oauthRecords(db).deleteMany({ grantId, kind });
}
