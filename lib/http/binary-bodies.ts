/**
 * Raw request bodies (`application/xml`, `application/zip`, `text/csv`), accepted only
 * by operations whose spec declares that media type (POST /api/imports, POST /api/deliveries); every
 * other operation keeps answering 415 to them, as to any non-JSON body. The
 * body arrives as a Buffer, bounded by the route's `bodyLimit` (413 beyond).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from './api-error.ts';

export const BINARY_MEDIA_TYPES = ['application/xml', 'application/zip', 'text/csv'] as const;

interface ContentSchema {
  content?: Record<string, unknown>;
}

function declares(request: FastifyRequest, mediaType: string): boolean {
  const body = (request.routeOptions.schema as { body?: ContentSchema } | undefined)?.body;
  return Boolean(body?.content && mediaType in body.content);
}

export function registerBinaryBodies(app: FastifyInstance): void {
  for (const mediaType of BINARY_MEDIA_TYPES) {
    app.addContentTypeParser(mediaType, { parseAs: 'buffer' }, (request, body, done) => {
      // No route for this method and path: the not-found handler answers (405 with `allow` on a known path), not 415.
      if (request.is404) {
        done(null, body);
        return;
      }
      if (!declares(request, mediaType)) {
        done(new ApiError(415, 'Unsupported Media Type', [`Unsupported Media Type: ${mediaType}`]), undefined);
        return;
      }
      done(null, body);
    });
  }
}

/** The validator of a binary body: the spec says "bytes", so anything the parser produced passes. */
export const binaryBodyValidator = (body: unknown): boolean => Buffer.isBuffer(body);
