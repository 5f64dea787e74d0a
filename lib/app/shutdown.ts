import fp from 'fastify-plugin';

declare module 'fastify' {
  interface FastifyInstance {
    /** Aborted as the service starts closing: imports in flight stop at their next batch and answer 503. */
    shutdown: AbortSignal;
  }
}

/**
 * A graceful close. server.close() ends only the keep-alive connections idle at that instant:
 * one whose answer was being sent as closing began turns idle later, without `connection:
 * close`, and would hold the close for KEEP_ALIVE_TIMEOUT_MS, so the idle ones are swept until
 * the server has closed. A request in flight when closing starts is served, and its connection
 * then closed: left open (keep-alive), it would hold the server's close until the client lets go.
 */
export const shutdownPlugin = fp(
  async function shutdown(app) {
    const closing = new AbortController();
    app.decorate('shutdown', closing.signal);
    let idleSweep: NodeJS.Timeout | undefined;
    app.addHook('preClose', (done) => {
      closing.abort();
      idleSweep = setInterval(() => app.server.closeIdleConnections(), 100);
      idleSweep.unref();
      done();
    });
    app.addHook('onClose', (_instance, done) => {
      clearInterval(idleSweep);
      done();
    });
    app.addHook('onSend', (_request, reply, payload, done) => {
      if (closing.signal.aborted) reply.header('connection', 'close');
      done(null, payload);
    });
  },
  { name: 'shutdown', fastify: '5.x' },
);
