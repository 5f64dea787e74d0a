import fp from 'fastify-plugin';
import { makeErrorHandlers } from '../http/error-handler.ts';
import { routeMethodIndex, type RouteMethodIndex } from '../http/hardening.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The methods routed for a path, from every route registered after this plugin (405 with `allow`). */
    routeMethods: RouteMethodIndex;
  }
}

/**
 * Every error in the documented error shape (lib/http/error-handler.ts). A known path with
 * another method is 405 with `allow`: the index sees every route registered after this plugin
 * (so before it only CORS's catch-all OPTIONS route).
 */
export const errorsPlugin = fp(
  async function errors(app) {
    const routeMethods = routeMethodIndex(app);
    app.decorate('routeMethods', routeMethods);
    app.setErrorHandler(makeErrorHandlers(routeMethods.methodsFor).errorHandler);
  },
  { name: 'errors', fastify: '5.x' },
);
