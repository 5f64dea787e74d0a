/**
 * Cache policy per route, not per URL pattern: a route states the
 * `cache-control` of its answers in its config (`config: { cacheControl }`);
 * the spec's secured operations and the MCP routes carry tenant data and say
 * `no-store`. An error answer is never stored, whatever the route (or when no
 * route matched). Public answers (health, Swagger UI) keep the default.
 */
import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The `cache-control` header of the route's answers (lib/http/cache-control.ts). */
    cacheControl?: string;
  }
}

export const NO_STORE = 'no-store';

/** Route config for tenant data: never stored by browsers or proxies. */
export const tenantDataRoute = { cacheControl: NO_STORE };

/** `cache-control` by route (above) and `x-content-type-options: nosniff` on every answer, in one hook. */
export function registerResponseHeaders(app: FastifyInstance): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff');
    const policy = reply.statusCode >= 400 ? NO_STORE : request.routeOptions.config?.cacheControl;
    if (policy !== undefined) reply.header('cache-control', policy);
    done(null, payload);
  });
}
