import type { FastifyReply, FastifyRequest } from 'fastify';
import { v1DeprecationHeaders } from '../lib/http/deprecation.ts';

/** Version of the list response shape the client asked for (validated against the spec's enum). */
export function apiVersion(request: FastifyRequest, reply: FastifyReply): '1' | '2' {
  const version = request.headers['x-api-version'] === '1' ? '1' : '2';
  reply.header('x-api-version', version);
  if (version === '1') reply.headers(v1DeprecationHeaders());
  return version;
}
