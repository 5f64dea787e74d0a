import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, badRequest } from '../lib/http/api-error.ts';
import { V1_SUNSET_AT, v1DeprecationHeaders } from '../lib/http/deprecation.ts';
import { mergeVary, parseAccept, weightOf } from '../lib/http/negotiation.ts';
import { loadV1Spec } from '../lib/app/spec.ts';
import { derefDocument } from '../lib/spec/deref.ts';

/** Media type of the deprecated version 1 list shape (a bare array of stored documents). */
export const V1_MEDIA_TYPE = 'application/vnd.freight.v1+json';

/** The versions `x-api-version` may name: `2` (spec/openapi.yaml) and the deprecated `1` (spec/v1.yaml). */
const VERSIONS = ['1', '2'];

/** The request headers the list answers depend on, named in their `Vary` (both versions, errors too). */
const NEGOTIATED_BY = ['x-api-version', 'accept'];

/**
 * Version 1 is asked for explicitly: `x-api-version: 1`, or an Accept header preferring the version 1 media type to
 * plain JSON. Version 1 answers carry their own media type, so a client (and a contract test) can tell the shapes
 * apart. The header is checked here, not by the validators: each document names only its own version (the current
 * one not at all), and any other value is a 400 as it always was. `x-api-version` wins over Accept.
 */
function wantsV1(request: FastifyRequest): boolean {
  const header = request.headers['x-api-version'];
  if (header !== undefined && !VERSIONS.includes(header as string)) {
    const detail = 'x-api-version must be one of: 1, 2';
    throw badRequest('Invalid header', [detail], { reason: 'invalid_parameter', fields: [{ in: 'header', name: 'x-api-version', detail }] });
  }
  if (header !== undefined) return header === '1';
  return acceptPrefersV1(request.headers.accept);
}

/**
 * Accept (RFC 9110 §12.5.1) chooses version 1 when the version 1 media type, named exactly (parameters other than q
 * aside; wildcards never choose it), has a weight above 0 and above that of `application/json` (its own range, else
 * `application/*`, else `*\/*`). A tie goes to `application/json`. No Accept, or one that accepts neither, is
 * version 2 as `application/json`, as it always was (the lists answer no 406).
 */
export function acceptPrefersV1(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const ranges = parseAccept(accept);
  const v1 = weightOf(ranges, V1_MEDIA_TYPE, { exactOnly: true }) ?? 0;
  const json = weightOf(ranges, 'application/json') ?? 0;
  return v1 > 0 && v1 > json;
}

/**
 * From its Sunset (RFC 8594: the instant it stops being served) version 1 is 410 Gone, whether asked for by
 * `x-api-version` or by Accept. The reason is `not_found`: what the request names is no longer there.
 */
function sunsetV1(): ApiError {
  const at = V1_SUNSET_AT.toISOString().replace('.000Z', 'Z');
  return new ApiError(
    410,
    'Gone',
    [
      `version 1 of this list (x-api-version: 1, ${V1_MEDIA_TYPE}) is no longer served since its sunset, ${at} (Sunset: ${V1_SUNSET_AT.toUTCString()})`,
      'migrate to version 2: drop x-api-version: 1 (and the version 1 media type from Accept) and read the array from data, with detail=full for the same stored documents',
    ],
    { reason: 'not_found' },
  );
}

/**
 * Version of the list response shape the client asked for; sets the version header and media type, and `Vary` on
 * the headers that choose it. `now` is the service's clock (HandlerDeps.now): version 1 is 410 from its sunset on.
 */
export function apiVersion(request: FastifyRequest, reply: FastifyReply, now: () => Date = () => new Date()): '1' | '2' {
  reply.header('vary', mergeVary(reply.getHeader('vary'), NEGOTIATED_BY));
  const version = wantsV1(request) ? '1' : '2';
  if (version === '1' && now().getTime() >= V1_SUNSET_AT.getTime()) throw sunsetV1();
  reply.header('x-api-version', version);
  if (version === '1') {
    refuseParametersOutsideV1(request);
    reply.headers(v1DeprecationHeaders()).type(V1_MEDIA_TYPE);
  }
  return version;
}

let v1Parameters: ReadonlyMap<string, ReadonlySet<string>> | undefined;

/** The query parameters of each version 1 list (spec/v1.yaml, its bundled document), by path. */
function v1ParametersOf(path: string): ReadonlySet<string> {
  v1Parameters ??= new Map(
    Object.entries((derefDocument(loadV1Spec()) as { paths: Record<string, { get: { parameters: { in: string; name: string }[] } }> }).paths).map(
      ([p, item]) => [p, new Set(item.get.parameters.filter((x) => x.in === 'query').map((x) => x.name))],
    ),
  );
  return v1Parameters.get(path) ?? new Set();
}

/**
 * Version 2's query parameters are validated before the version is known (one route serves both); a version 1 call
 * names only version 1's. One of version 2 alone (`detail`, `cursor`, …) is refused as any unknown parameter is, never
 * ignored (a `detail=summary` answered stored records, a cursor walked on).
 */
function refuseParametersOutsideV1(request: FastifyRequest): void {
  const known = v1ParametersOf(request.routeOptions.url ?? '');
  // The names the client sent, not the validated query (version 2's defaults are filled in there).
  const at = request.url.indexOf('?');
  const sent = at < 0 ? [] : [...new Set(new URLSearchParams(request.url.slice(at + 1)).keys())];
  const unknown = sent.filter((name) => !known.has(name));
  if (!unknown.length) return;
  const fields = unknown.map((name) => ({
    in: 'query' as const,
    name,
    detail: `${name} is not a parameter of version 1 (x-api-version: 1) of this list: version 2 takes it`,
  }));
  throw badRequest(
    'Invalid query parameter',
    fields.map((f) => f.detail),
    { reason: 'invalid_parameter', fields },
  );
}

/**
 * A version 2 list page: the detail level stated at the top too, the discriminator of the
 * page schemas. Distributes over the page union, so each detail keeps its own data type.
 */
export type WithDetail<P> = P extends { meta: { detail: infer D } } ? P & { detail: D } : never;

export function withDetail<P extends { meta: { detail: string } }>(page: P): WithDetail<P> {
  return { detail: page.meta.detail, ...page } as WithDetail<P>;
}

/** A version 1 page: the bare array, and where an incremental sync resumes as the `sync-from` header (spec/headers.yaml). */
export function v1Page<T>(reply: FastifyReply, page: { docs: T[]; syncFrom?: string }): T[] {
  if (page.syncFrom !== undefined) reply.header('sync-from', page.syncFrom);
  return page.docs;
}
