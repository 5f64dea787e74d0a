import fp from 'fastify-plugin';
import { makeErrorHandlers } from '../http/error-handler.ts';

/** An unknown path is 404, a known one with another method 405; counted by the rate limit like any request. */
export const notFoundPlugin = fp(
  async function notFound(app) {
    app.setNotFoundHandler({ preHandler: app.limitRequests }, makeErrorHandlers(app.routeMethods.methodsFor).notFoundHandler);
  },
  { name: 'not-found', dependencies: ['errors', 'rate-limit'], fastify: '5.x' },
);
