import type { onRequestAsyncHookHandler, onResponseAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { reportBudget } from '../http/rate-limit.ts';
import { tenantConcurrency } from '../http/tenant-concurrency.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The hooks of the operations marked `x-rate-limit-budget: reports`, after authentication. */
    reports: {
      /** onRequest: the reports' own budget per tenant (REPORT_RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_MS). */
      budget: onRequestAsyncHookHandler;
      /** onRequest: waits for one of the tenant's turns (REPORT_MAX_CONCURRENT_PER_TENANT, REPORT_QUEUE_PER_TENANT). */
      acquire: onRequestAsyncHookHandler;
      /** onResponse: gives the turn back. */
      release: onResponseAsyncHookHandler;
    };
  }
}

/**
 * Year-long reports cost seconds: a budget of their own per tenant, and one tenant's run a few
 * at a time, so they cannot take every database thread from other tenants.
 */
export const reportTurnsPlugin = fp(
  async function reportTurns(app) {
    const { rateLimit } = app.config;
    const turns = tenantConcurrency({ perTenant: rateLimit.reportConcurrency, queue: rateLimit.reportQueue });
    app.decorate('reports', { budget: reportBudget(app, { max: rateLimit.reportMax, windowMs: rateLimit.windowMs }), ...turns });
  },
  { name: 'report-turns', dependencies: ['config', 'rate-limit'], fastify: '5.x' },
);
