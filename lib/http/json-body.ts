/**
 * JSON request bodies, parsed by Fastify's own parser (prototype-poisoning protection
 * included, its refusal told as such) except for one case: an empty body with a JSON content type is no body at all.
 * Clients send it on operations that take none (the official MCP Python SDK ends a session
 * with `DELETE /mcp`, `content-type: application/json` and nothing after the headers), where
 * Fastify's parser answered 400 "Body cannot be empty". Operations that require a body still
 * answer 400 for it (`requireBody`, lib/http/hardening.ts), and so do the MCP message routes.
 * An operation whose body is XML, zip or CSV only (`POST /api/imports/xml`, …) answers 415 to JSON.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, badRequest } from './api-error.ts';

/** An operation whose body the spec declares in other media types only (XML, zip, CSV) takes no JSON. */
function refusesJson(request: FastifyRequest): boolean {
  if (request.is404) return false;
  const body = (request.routeOptions.schema as { body?: { content?: Record<string, unknown> } } | undefined)?.body;
  return Boolean(body?.content && !('application/json' in body.content));
}

const POISONING =
  'the body holds a key __proto__ or constructor with prototype, refused anywhere in a JSON body (prototype poisoning protection); rename the key';

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export function registerJsonBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (refusesJson(request)) {
      done(new ApiError(415, 'Unsupported Media Type', ['Unsupported Media Type: application/json']), undefined);
      return;
    }
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text === '') {
      done(null, undefined);
      return;
    }
    // Fastify's default parser answers through `done` (its type also allows a promise-returning parser). It refuses
    // JSON holding a key `__proto__` or `constructor.prototype` as it refuses malformed JSON ("Body is not valid
    // JSON"); that body is valid JSON, so it is told why instead.
    void parse(request, text, (err, value) => {
      if (err && isJson(text)) {
        done(badRequest('Invalid request body', [POISONING], { reason: 'invalid_body', fields: [{ in: 'body', name: '', detail: POISONING }] }), undefined);
        return;
      }
      done(err, value);
    });
  });
}
