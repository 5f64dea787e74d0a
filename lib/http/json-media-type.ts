import type { FastifyInstance } from 'fastify';

/** `application/json` or a `+json` type, with the charset parameter Fastify appends. */
const JSON_WITH_CHARSET = /^(application\/(?:[\w.-]+\+)?json)\s*;\s*charset=utf-8$/i;

/**
 * JSON answers name their media type bare, without Fastify's `; charset=utf-8`: RFC 8259 defines
 * no charset parameter for JSON (it is UTF-8), and a client generated for an answer offered in
 * several media types picks one by comparing the header exactly (oapi-codegen:
 * `Content-Type == "application/json"`), so with the parameter a Go client of the lists (JSON,
 * or the deprecated vnd.freight.v1+json) parsed neither.
 */
export function bareJsonMediaTypes(app: FastifyInstance): void {
  app.addHook('onSend', (_request, reply, payload, done) => {
    const type = reply.getHeader('content-type');
    const bare = typeof type === 'string' ? JSON_WITH_CHARSET.exec(type)?.[1] : undefined;
    if (bare) reply.header('content-type', bare);
    done(null, payload);
  });
}
