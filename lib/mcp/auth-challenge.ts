/**
 * The 401 of the MCP endpoints carries `WWW-Authenticate` (RFC 9110 §11.6.1;
 * the MCP authorization spec has clients read it): the credential goes as a bearer
 * token (`Authorization: Bearer <key or access token>`) or in `x-api-key`. With
 * OAuth on, it names the protected resource metadata (RFC 9728 §5.1) a hosted
 * client starts its authorization from. Without it, MCP clients can only report
 * "Server returned an error response".
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/api-error.ts';

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * The challenge: `invalid_token` when a credential was presented and refused (RFC 6750 §3.1), none
 * when there was none; `resource_metadata` when OAuth is on.
 */
export function bearerChallenge(err: ApiError, resourceMetadata?: string): string {
  const refused = err.reason === 'unknown_api_key';
  return [
    'Bearer realm="freight"',
    ...(resourceMetadata ? [`resource_metadata="${resourceMetadata}"`] : []),
    'scope="read write"',
    ...(refused
      ? [
          'error="invalid_token"',
          `error_description="unknown${resourceMetadata ? ', expired' : ''} or revoked API key${resourceMetadata ? ' or access token' : ''}"`,
        ]
      : []),
  ].join(', ');
}

/** `authenticate` with the challenge set on its 401; `resourceMetadata` gives the request's metadata URL (none: OAuth off). */
export const withChallenge =
  (authenticate: Hook, resourceMetadata: (request: FastifyRequest) => string | undefined = () => undefined): Hook =>
  async (request, reply) => {
    try {
      await authenticate(request, reply);
    } catch (err) {
      if (err instanceof ApiError && err.statusCode === 401) reply.header('www-authenticate', bearerChallenge(err, resourceMetadata(request)));
      throw err;
    }
  };
