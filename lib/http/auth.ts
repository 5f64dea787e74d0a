import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from 'mongodb';
import { cachedApiKey, hashKey, resolveApiKey } from '../auth/api-keys.ts';
import { looksLikeAccessToken, resolveAccessToken } from '../auth/access-tokens.ts';
import { isInternalDispatch } from './internal-dispatch.ts';
import type { ApiScope } from '../auth/api-key-record.ts';
import type { ResolvedKey } from '../auth/api-key-cache.ts';
import { ApiError } from './api-error.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The resources OAuth access tokens must be issued for to be accepted here (the MCP URLs); empty: OAuth off, API keys only. */
    accessTokenAudiences: readonly string[];
  }
  interface FastifyContextConfig {
    /** The route accepts OAuth access tokens as well as API keys (the MCP transports). */
    acceptsAccessTokens?: boolean;
    /**
     * The route needs no API key (the spec's `security: []`: /ready, shared links): the rate limiter does not look a
     * presented key up there (lib/http/rate-limit.ts), so it never waits on the database for one.
     */
    needsNoKey?: boolean;
  }
  interface FastifyRequest {
    /** RFC of the authenticated tenant; set by `authenticate`, null on public routes. */
    tenant: string | null;
    apiKeyId: string | null;
  }
}

/** The key a client presented: `x-api-key`, or `Authorization: Bearer <key>` (what many MCP clients send). */
export function presentedKey(request: FastifyRequest): string | null {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string' && header.length > 0) return header;
  const auth = request.headers.authorization;
  if (typeof auth === 'string' && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim() || null;
  return null;
}

/** The tenant of a request that went through `authenticate`; a programming error otherwise. */
export function tenantOf(request: FastifyRequest): string {
  if (!request.tenant) throw new Error('tenantOf() called on an unauthenticated route');
  return request.tenant;
}

/**
 * Who is calling: no key, a valid key, an unknown or revoked one, or (`unchecked`) a key that was
 * not looked up because its client address has spent its budget for requests without a valid
 * key (lib/http/spent-addresses.ts).
 */
export type Caller = { kind: 'none' } | { kind: 'valid'; key: ResolvedKey; hash: string } | { kind: 'unknown' } | { kind: 'unchecked' };

const callers = new WeakMap<FastifyRequest, Caller>();

/** The caller of a request if it was identified already. */
export const knownCaller = (request: FastifyRequest): Caller | undefined => callers.get(request);

/**
 * Whether this request may present an OAuth access token: on the routes that say so (the MCP
 * transports) and on the REST request an MCP tool call dispatches (its token was presented to
 * /mcp); never on REST itself, which the tokens' audience (the MCP URL) does not cover.
 */
function acceptsAccessTokens(request: FastifyRequest): boolean {
  return request.server.accessTokenAudiences.length > 0 && (request.routeOptions.config?.acceptsAccessTokens === true || isInternalDispatch(request));
}

/** A presented OAuth access token, resolved (null: not one, or not valid here). `lookup: false` answers from the cache only. */
async function tokenCaller(db: Db, request: FastifyRequest, presented: string): Promise<Caller | null> {
  if (!looksLikeAccessToken(presented) || !acceptsAccessTokens(request)) return null;
  const token = await resolveAccessToken(db, presented, request.server.accessTokenAudiences);
  return token ? { kind: 'valid', key: token.key, hash: token.keyHash } : null;
}

/**
 * The caller of a request, read once per request (the rate limiter asks first, `authenticate`
 * reuses the answer). `lookup: false` answers from the key cache only, never the database.
 */
export async function identifyCaller(db: Db, request: FastifyRequest, opts: { lookup: boolean }): Promise<Caller> {
  const known = callers.get(request);
  if (known && (known.kind !== 'unchecked' || !opts.lookup)) return known;
  const presented = presentedKey(request);
  let caller: Caller;
  const token = presented && opts.lookup ? await tokenCaller(db, request, presented) : null;
  if (!presented) caller = { kind: 'none' };
  else if (token) caller = token;
  else {
    const cached = cachedApiKey(db, presented);
    if (cached.state === 'valid') caller = { kind: 'valid', key: cached.key, hash: hashKey(presented) };
    else if (cached.state === 'unknown') caller = { kind: 'unknown' };
    else if (!opts.lookup) caller = { kind: 'unchecked' };
    else {
      const key = await resolveApiKey(db, presented);
      caller = key ? { kind: 'valid', key, hash: hashKey(presented) } : { kind: 'unknown' };
    }
  }
  callers.set(request, caller);
  return caller;
}

/**
 * onRequest hook, after the rate limiter (which has usually identified the caller already):
 * runs before body parsing and validation, so a request without a valid key is a 401 whatever
 * else is wrong with it.
 */
export function makeAuthenticate(db: Db, requiredScope?: ApiScope) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const caller = await identifyCaller(db, request, { lookup: true });
    if (caller.kind === 'none') throw new ApiError(401, 'Unauthorized', ['missing x-api-key header'], { reason: 'missing_api_key' });
    if (caller.kind !== 'valid') throw new ApiError(401, 'Unauthorized', ['unknown or revoked API key']);
    const found = caller.key;
    // Scope after identity: a known key without the right is 403, not 401.
    if (requiredScope && !found.scopes.includes(requiredScope)) {
      throw new ApiError(403, 'Forbidden', [`this API key lacks the '${requiredScope}' scope`]);
    }
    request.tenant = found.tenant;
    request.apiKeyId = found.keyId;
    request.log = request.log.child({ tenant: found.tenant, keyId: found.keyId });
  };
}
