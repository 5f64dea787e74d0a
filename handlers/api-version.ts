import type { FastifyReply, FastifyRequest } from 'fastify';
import { badRequest } from '../lib/http/api-error.ts';
import { v1DeprecationHeaders } from '../lib/http/deprecation.ts';

/** Media type of the deprecated version 1 list shape (a bare array of stored documents). */
export const V1_MEDIA_TYPE = 'application/vnd.freight.v1+json';

/** The versions `x-api-version` may name: `2` (spec/openapi.yaml) and the deprecated `1` (spec/v1.yaml). */
const VERSIONS = ['1', '2'];

/**
 * Version 1 is asked for explicitly: `x-api-version: 1`, or an Accept header naming the version 1
 * media type and not plain JSON. Version 1 answers carry their own media type, so a client (and a
 * contract test) can tell the shapes apart. The header is checked here, not by the validators: each
 * document names only its own version (the current one not at all), and any other value is a 400
 * as it always was.
 */
function wantsV1(request: FastifyRequest): boolean {
  const header = request.headers['x-api-version'];
  if (header !== undefined && !VERSIONS.includes(header as string)) {
    const detail = 'x-api-version must be one of: 1, 2';
    throw badRequest('Invalid header', [detail], { reason: 'invalid_parameter', fields: [{ in: 'header', name: 'x-api-version', detail }] });
  }
  if (header !== undefined) return header === '1';
  const accept = (request.headers.accept ?? '').toLowerCase();
  return accept.includes(V1_MEDIA_TYPE) && !/(^|,)\s*(application\/json|application\/\*|\*\/\*)\s*(;|,|$)/.test(accept);
}

/** Version of the list response shape the client asked for; sets the version header and media type. */
export function apiVersion(request: FastifyRequest, reply: FastifyReply): '1' | '2' {
  const version = wantsV1(request) ? '1' : '2';
  reply.header('x-api-version', version);
  if (version === '1') reply.headers(v1DeprecationHeaders()).type(V1_MEDIA_TYPE);
  return version;
}

/**
 * A version 2 list page: the detail level stated at the top too, the discriminator of the
 * page schemas. Distributes over the page union, so each detail keeps its own data type.
 */
export type WithDetail<P> = P extends { meta: { detail: infer D } } ? P & { detail: D } : never;

export function withDetail<P extends { meta: { detail: string } }>(page: P): WithDetail<P> {
  return { detail: page.meta.detail, ...page } as WithDetail<P>;
}
