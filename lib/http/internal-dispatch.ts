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

/**
 * An internal dispatch that only checks its request: it ends after authentication and validation,
 * before the handler, with 204 (lib/app/validation.ts). An MCP tool that asks the user to confirm
 * checks its arguments this way first, so an invalid call gets its 400 without asking anyone.
 */
export const VALIDATE_ONLY_HEADER = 'x-internal-validate-only';

export const validateOnlyHeaders = (): Record<string, string> => ({ ...internalDispatchHeaders(), [VALIDATE_ONLY_HEADER]: '1' });

export const isValidateOnly = (request: FastifyRequest): boolean => request.headers[VALIDATE_ONLY_HEADER] === '1' && isInternalDispatch(request);
