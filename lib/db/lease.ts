/**
 * A short exclusive lease on a name (e.g. one tenant's alert quota), held across a check and
 * the write it guards, so a count-then-insert is atomic across requests and instances: twelve
 * concurrent schedules all passed a count of the tenant's jobs before any had inserted (issue 33).
 *
 * Plain documents with a unique `_id`, no transaction, so real MongoDB and the embedded engine
 * behave alike. A lease expires after `ttlMs`, so a holder that died frees it by itself; the
 * guarded work must finish well within it (its queries carry maxTimeMS). A request that waited
 * `waitMs` for its turn fails with LeaseBusy (lib/http/error-handler.ts: 503 with retry-after).
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from './collections.ts';
import { isDuplicateKeyError } from './duplicate-key.ts';

interface LeaseDocument {
  _id: string;
  holder: string;
  expiresAt: Date;
}

const leases = (db: Db): Collection<LeaseDocument> => db.collection<LeaseDocument>(COLLECTIONS.leases);

/** The lease stayed held by another request for the whole wait. */
export class LeaseBusy extends Error {
  constructor(
    readonly lease: string,
    readonly waitedMs: number,
    what: string,
  ) {
    super(`other ${what} of this tenant were being written for ${waitedMs} ms; retry shortly`);
    this.name = 'LeaseBusy';
  }
}

export interface LeaseOptions {
  /** What the lease guards, in words for the client (`alert schedules`). */
  what: string;
  /** How long a lease lives if its holder never releases it. */
  ttlMs: number;
  /** How long to wait for a held lease before LeaseBusy. */
  waitMs: number;
  now?: () => number;
}

async function acquire(db: Db, name: string, holder: string, opts: LeaseOptions): Promise<void> {
  const now = opts.now ?? Date.now;
  const start = now();
  for (let attempt = 0; ; attempt++) {
    const t = now();
    const expiresAt = new Date(t + opts.ttlMs);
    try {
      await leases(db).insertOne({ _id: name, holder, expiresAt });
      return;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
    }
    // Held: take it over only once expired (its holder died or overran).
    const taken = await leases(db).updateOne({ _id: name, expiresAt: { $lte: new Date(t) } }, { $set: { holder, expiresAt } });
    if (taken.modifiedCount === 1) return;
    if (t - start >= opts.waitMs) throw new LeaseBusy(name, t - start, opts.what);
    // Short, growing, jittered pauses: holders keep it for one bounded write.
    await new Promise((resolve) => setTimeout(resolve, Math.min(10 * 2 ** Math.min(attempt, 4), 160) * (0.5 + Math.random())));
  }
}

/** Runs `work` holding the lease `name`; releases it after, whatever `work` did. */
export async function withLease<T>(db: Db, name: string, opts: LeaseOptions, work: () => Promise<T>): Promise<T> {
  const holder = randomUUID();
  await acquire(db, name, holder, opts);
  try {
    return await work();
  } finally {
    await leases(db)
      .deleteOne({ _id: name, holder })
      .catch(() => undefined); // unreleased, it expires after ttlMs
  }
}

/** A quota's lease: several queries run under it, each within `queryTimeoutMs`; a request waits one query's time for its turn. */
export const quotaLease = (queryTimeoutMs: number, what: string): LeaseOptions => ({ what, ttlMs: 4 * queryTimeoutMs, waitMs: queryTimeoutMs });
