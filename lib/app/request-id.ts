import fp from 'fastify-plugin';

/**
 * Every answer names its request (`x-request-id`, made by genRequestId, lib/http/request-id.ts).
 * A callback-style hook: it runs on every request, and an async hook costs a promise each time.
 */
export const requestIdPlugin = fp(
  async function requestId(app) {
    app.addHook('onRequest', (request, reply, done) => {
      reply.header('x-request-id', request.id);
      done();
    });
  },
  { name: 'request-id', fastify: '5.x' },
);
