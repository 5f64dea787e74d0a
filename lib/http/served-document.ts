/**
 * The first server of the OpenAPI document the service serves (`/docs/json`, Swagger UI),
 * which Swagger UI's "Try it out" and clients generated from the document call:
 *
 * - PUBLIC_BASE_URL when configured: the address clients reach the service at (behind a
 *   proxy, a load balancer, a path prefix);
 * - otherwise, for a request to a loopback address (`npm start` on a laptop:
 *   `http://localhost:3000`, `http://127.0.0.1:…`), that very address;
 * - otherwise `/`: relative, so each client resolves it against the address it fetched the
 *   document from. The request's `Host` (or `X-Forwarded-Host`) is never written into the
 *   document: a forged one would end up in generated clients and shared caches.
 */
import type { FastifyRequest } from 'fastify';

interface Server {
  url: string;
  description?: string;
}

/** A loopback host with an optional port, as a Host header carries it. */
const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i;

export function firstServer(request: Pick<FastifyRequest, 'host' | 'protocol'>, publicBaseUrl: string | null): Server {
  if (publicBaseUrl) return { url: publicBaseUrl, description: 'This service (PUBLIC_BASE_URL)' };
  if (LOOPBACK_HOST.test(request.host))
    return { url: `${request.protocol}://${request.host.toLowerCase()}`, description: 'This service (the local address this document was fetched from)' };
  return { url: '/', description: 'This service: the address this document was fetched from (set PUBLIC_BASE_URL to name it)' };
}

/** `document` with `server` first (once). */
export function withFirstServer<T extends { servers?: Server[] }>(document: T, server: Server): T {
  const others = (document.servers ?? []).filter((s) => s.url !== server.url);
  return { ...document, servers: [server, ...others] };
}
