import type { onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { requestDeadline } from '../http/hardening.ts';

/** A route's deadline as the spec states it (`x-request-deadline`, handlers/route-policy.ts). */
export type DeadlineKind = 'default' | 'imports' | 'none';

declare module 'fastify' {
  interface FastifyInstance {
    /** The onRequest hooks of each kind of deadline: 503 when a request is still unanswered after it. */
    requestDeadlines: Readonly<Record<DeadlineKind, readonly onRequestHookHandler[]>>;
  }
}

/**
 * REQUEST_TIMEOUT_MS by default; imports of thousands of files (or of a month of delivery
 * tickets) take minutes: their own, longer deadline (IMPORT_TIMEOUT_MS); a liveness probe does no I/O: none.
 */
export const deadlinesPlugin = fp(
  async function deadlines(app) {
    const { config } = app;
    app.decorate('requestDeadlines', {
      default: [requestDeadline(config.requestTimeoutMs)],
      imports: [requestDeadline(config.imports.timeoutMs)],
      none: [],
    });
  },
  { name: 'deadlines', dependencies: ['config'], fastify: '5.x' },
);
