import fp from 'fastify-plugin';
import { registerResponseHeaders } from '../http/cache-control.ts';

/** `cache-control` by route and `x-content-type-options: nosniff` on every answer (lib/http/cache-control.ts). */
export const responseHeadersPlugin = fp(
  async function responseHeaders(app) {
    registerResponseHeaders(app);
  },
  { name: 'response-headers', fastify: '5.x' },
);
