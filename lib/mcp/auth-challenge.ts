/**
 * The 401 of the MCP endpoints carries `WWW-Authenticate` (RFC 9110 §11.6.1;
 * the MCP authorization spec has clients read it): the key goes as a bearer
 * token (`Authorization: Bearer <key>`) or in `x-api-key`. Without it, MCP
 * clients can only report "Server returned an error response".
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/api-error.ts';

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** The challenge: `invalid_token` when a key was presented and refused (RFC 6750 §3.1), none when there was no key. */
export function bearerChallenge(err: ApiError): string {
  const refused = err.reason === 'unknown_api_key';
  return `Bearer realm="freight", scope="read write"${refused ? ', error="invalid_token", error_description="unknown or revoked API key"' : ''}`;
}

/** `authenticate` with the challenge set on its 401. */
export const withChallenge =
  (authenticate: Hook): Hook =>
  async (request, reply) => {
    try {
      await authenticate(request, reply);
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 401) reply.header('www-authenticate', bearerChallenge(err));
      throw err;
    }
  };
