/**
 * Idempotency-Key handling the way payment APIs do it:
 *   - first request with a key claims it (unique `_id`), runs, stores its answer;
 *   - a key is per (tenant, operation, key); its record keeps the request's fingerprint;
 *   - same key + same request → the stored answer, marked as replayed;
 *   - same key + different request (body) → 409 `idempotency_key_reused`, while the first
 *     request's record lives (done or still running): the key is bound to that request, as
 *     Stripe binds it. draft-ietf-httpapi-idempotency-key-header ("Error Scenarios") suggests
 *     422; 409 because a consumer's contract tests with their default checks (Schemathesis's
 *     positive data acceptance) take 409, a conflict with the key's state, and refuse a 422 to
 *     a schema-valid request;
 *   - same key + same request while the first is still running → wait a little, then 409;
 *   - a request that fails (4xx/5xx) releases the key, so it can be retried;
 *   - a claim whose owner died (lease expired) is taken over.
 * Keys are per tenant and kept 24 hours.
 */
import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import { ApiError } from '../http/api-error.ts';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  deleteExpiredIdempotencyKey,
  getIdempotencyRecord,
  idempotencyId,
  releaseIdempotencyKey,
  takeOverIdempotencyKey,
} from './idempotency-repo.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
export const IDEMPOTENCY_LEASE_MS = 60_000;

export interface IdempotencyOptions {
  tenant: string;
  key: string;
  operation: string;
  /** The request, canonicalised and hashed by `requestFingerprint`. */
  fingerprint: string;
  now: () => Date;
  /** How long a duplicate waits for an in-flight first request before 409 (default 5 s). */
  waitMs?: number;
  pollMs?: number;
}

/**
 * JSON with object keys sorted at every level, so key order does not matter. Written iteratively (a stack of what is
 * left to write): a body nested some thousands deep, which the schema and the size limits admit, overflowed the
 * call stack of a recursive writer (a 500).
 */
export function canonicalJson(root: unknown): string {
  const out: string[] = [];
  // Text to write as it is, or a value to write (in a box: a value may itself be a string).
  const todo: (string | { value: unknown })[] = [{ value: root }];
  while (todo.length) {
    const next = todo.pop()!;
    if (typeof next === 'string') {
      out.push(next);
      continue;
    }
    const { value } = next;
    if (Array.isArray(value)) {
      todo.push(']');
      for (let i = value.length - 1; i >= 0; i--) todo.push({ value: value[i] as unknown }, ...(i > 0 ? [','] : []));
      out.push('[');
    } else if (value && typeof value === 'object' && !(value instanceof Date)) {
      const entries = Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      todo.push('}');
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i]!;
        todo.push({ value: v }, `${JSON.stringify(k)}:`, ...(i > 0 ? [','] : []));
      }
      out.push('{');
    } else out.push(JSON.stringify(value) ?? 'null');
  }
  return out.join('');
}

export function requestFingerprint(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request), 'utf8').digest('hex');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface IdempotentResult<T> {
  body: T;
  replayed: boolean;
}

/**
 * The stored record of a key: one per (tenant, key, operation), whatever the body. Records of
 * the former scheme (`…\0operation\0fingerprint`) never collide with these ids (a key has no NUL):
 * they are ignored and expire with their TTL.
 */
export const idempotencyRecordId = (o: Pick<IdempotencyOptions, 'tenant' | 'key' | 'operation'>): string =>
  idempotencyId(o.tenant, `${o.key}\u0000${o.operation}`);

/** 409: the key is already bound to another request (another body) of this operation. */
export const idempotencyKeyReused = (): ApiError =>
  new ApiError(
    409,
    'Conflict',
    ['this Idempotency-Key was already used for a different request (another body) in the last 24 hours; send a new key for a new request'],
    { reason: 'idempotency_key_reused' },
  );

export async function withIdempotency<T>(db: Db, opts: IdempotencyOptions, run: () => Promise<T>): Promise<IdempotentResult<T>> {
  const id = idempotencyRecordId(opts);
  const waitMs = opts.waitMs ?? 5000;
  const pollMs = opts.pollMs ?? 100;
  const deadline = Date.now() + waitMs;

  const execute = async (): Promise<IdempotentResult<T>> => {
    let body: T;
    try {
      body = await run();
    } catch (err) {
      await releaseIdempotencyKey(db, id).catch(() => {});
      throw err;
    }
    await completeIdempotencyKey(db, id, 200, body);
    return { body, replayed: false };
  };

  for (;;) {
    const now = opts.now();
    const claimed = await claimIdempotencyKey(db, {
      _id: id,
      tenant: opts.tenant,
      key: opts.key,
      operation: opts.operation,
      fingerprint: opts.fingerprint,
      state: 'pending',
      leaseUntil: new Date(now.getTime() + IDEMPOTENCY_LEASE_MS),
      status: null,
      body: null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + IDEMPOTENCY_TTL_MS),
    });
    if (claimed) return execute();

    const existing = await getIdempotencyRecord(db, id);
    if (!existing) continue; // released or purged in between: claim again
    if (existing.expiresAt.getTime() <= now.getTime()) {
      await deleteExpiredIdempotencyKey(db, id, existing.expiresAt);
      continue;
    }
    if (existing.fingerprint !== opts.fingerprint) throw idempotencyKeyReused();
    if (existing.state === 'done') return { body: existing.body as T, replayed: true };
    if (existing.leaseUntil.getTime() <= now.getTime()) {
      if (await takeOverIdempotencyKey(db, id, existing.leaseUntil, new Date(now.getTime() + IDEMPOTENCY_LEASE_MS))) return execute();
      continue;
    }
    if (Date.now() >= deadline) {
      throw new ApiError(409, 'Conflict', ['a request with this Idempotency-Key is still in progress; retry shortly']);
    }
    await sleep(pollMs);
  }
}
