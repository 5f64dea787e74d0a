import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/**
 * Requests the service dispatches to itself with `app.inject()` (an MCP tool
 * call executing its REST operation). The outer MCP request has already been
 * counted by the rate limit, so the inner one carries a per-process random
 * token that exempts it from being counted a second time. Authentication,
 * validation and error mapping still run on it as on any request.
 */
export const INTERNAL_DISPATCH_HEADER = 'x-internal-dispatch';
const TOKEN = randomBytes(32).toString('hex');
const TOKEN_BUFFER = Buffer.from(TOKEN);

export const internalDispatchHeaders = (): Record<string, string> => ({ [INTERNAL_DISPATCH_HEADER]: TOKEN });

export function isInternalDispatch(request: FastifyRequest): boolean {
  const value = request.headers[INTERNAL_DISPATCH_HEADER];
  if (typeof value !== 'string' || value.length !== TOKEN.length) return false;
  return timingSafeEqual(Buffer.from(value), TOKEN_BUFFER);
}
