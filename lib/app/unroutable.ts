import fp from 'fastify-plugin';
import { UNROUTABLE_PREFIX, unroutableError, type UnroutableArea, type UnroutableProblem } from '../http/hardening.ts';

/**
 * The route of the paths the router would refuse (`rewriteUnroutable`, lib/http/hardening.ts):
 * counted by the rate limit like any request and, under /api/, authenticated first as every
 * operation is (401 before 400) unless its operation needs no key, then a 400 in the error shape.
 * Not an operation of the spec.
 */
export const unroutablePlugin = fp(
  async function unroutable(app) {
    for (const area of ['api', 'keyless', 'other'] as const satisfies readonly UnroutableArea[]) {
      app.route<{ Params: { problem: UnroutableProblem } }>({
        method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
        url: `${UNROUTABLE_PREFIX}/${area}/:problem`,
        exposeHeadRoute: false,
        // A keyless operation's path never looks a presented key up (its own routes do not either).
        config: area === 'keyless' ? { needsNoKey: true } : {},
        onRequest: area === 'api' ? [app.limitRequests, app.authenticate.read] : [app.limitRequests],
        handler: async (request) => {
          throw unroutableError(request.params.problem === 'bad-url' ? 'bad-url' : 'long-segment');
        },
      });
    }
  },
  { name: 'unroutable', dependencies: ['auth', 'rate-limit', 'errors'], fastify: '5.x' },
);
