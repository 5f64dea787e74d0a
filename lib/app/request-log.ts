import fp from 'fastify-plugin';

/**
 * The request's one log line, once answered (hijacked MCP streams included): method, URL,
 * status, time, and the tenant once authenticated (request.log is then the tenant's child
 * logger). Fastify's own two lines are off (buildApp's logController): at LOG_LEVEL=info
 * logging was ~40 % of a cheap request's cost (docs/benchmarks.md, "Per-request work").
 */
export const requestLogPlugin = fp(
  async function requestLog(app) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
      done();
    });
  },
  { name: 'request-log', fastify: '5.x' },
);
