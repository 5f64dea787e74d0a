import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { ApiScope } from '../auth/api-key-record.ts';
import { makeAuthenticate } from '../http/auth.ts';
import { mcpResourceUrls } from '../oauth/resource-urls.ts';

/** onRequest hook: 401 without a valid key, 403 without the scope; sets `request.tenant` and `request.apiKeyId`. */
export type Authenticate = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

declare module 'fastify' {
  interface FastifyInstance {
    /** Authentication by API key for each scope: reading needs `read`, anything that changes state `write`. */
    authenticate: Readonly<Record<ApiScope, Authenticate>>;
  }
}

/**
 * Who calls: `request.tenant` and `request.apiKeyId` (null until authenticated, and on public
 * routes) and the hooks that set them, and which OAuth access tokens count (their audiences). Adds no hook itself: the routes list `authenticate` where
 * they need it, after their deadline and rate limit.
 */
export const authPlugin = fp(
  async function auth(app) {
    app.decorateRequest('tenant', null);
    app.decorateRequest('apiKeyId', null);
    app.decorate('authenticate', { read: makeAuthenticate(app.db, 'read'), write: makeAuthenticate(app.db, 'write') });
    // OAuth access tokens count on the MCP transports (and their tools' REST dispatch) when OAuth is on (lib/app/oauth.ts).
    app.decorate('accessTokenAudiences', app.config.oauth.enabled ? mcpResourceUrls(app.config.oauth.issuer) : []);
  },
  { name: 'auth', dependencies: ['config', 'database', 'caches'], fastify: '5.x' },
);
