import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from 'mongodb';
import { resolveApiKey } from '../auth/api-keys.ts';
import type { ApiScope } from '../auth/api-key-record.ts';
import { ApiError } from './api-error.ts';

declare module 'fastify' {
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
 * onRequest hook: runs before body parsing and validation, so a request
 * without a valid key is a 401 whatever else is wrong with it.
 */
export function makeAuthenticate(db: Db, requiredScope?: ApiScope) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const key = presentedKey(request);
    if (!key) throw new ApiError(401, 'Unauthorized', ['missing x-api-key header'], { reason: 'missing_api_key' });
    const found = await resolveApiKey(db, key);
    if (!found) throw new ApiError(401, 'Unauthorized', ['unknown or revoked API key']);
    // Scope after identity: a known key without the right is 403, not 401.
    if (requiredScope && !found.scopes.includes(requiredScope)) {
      throw new ApiError(403, 'Forbidden', [`this API key lacks the '${requiredScope}' scope`]);
    }
    request.tenant = found.tenant;
    request.apiKeyId = found.keyId;
    request.log = request.log.child({ tenant: found.tenant, keyId: found.keyId });
  };
}
