import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import fastifyMetricsModule from 'fastify-metrics';
import promClient, { Registry } from 'prom-client';
import { metricsTokenChecker } from '../metrics/metrics-token.ts';
import { isInternalDispatch } from '../http/internal-dispatch.ts';
import { operationByRoute } from '../spec/operation-by-route.ts';
import { NO_METRICS, type ServiceMetrics } from '../metrics/service-metrics.ts';
import { exposition, LATENCY_BUCKETS, prometheusMetrics } from '../metrics/prometheus.ts';
import { databaseReader } from '../metrics/database-reading.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** What the areas count (MCP tool calls, imported files, webhook attempts): Prometheus metrics, or nothing when METRICS_ENABLED is off. */
    serviceMetrics: ServiceMetrics;
  }
}

// A CommonJS module with an ES default export: the plugin is its `default`.
const fastifyMetrics = fastifyMetricsModule.default;

/** onRequest hook of GET /metrics when METRICS_TOKEN is set: `authorization: Bearer <token>` or 401. */
function requireToken(token: string) {
  const check = metricsTokenChecker(token);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('www-authenticate', 'Bearer realm="metrics"');
    const refused = check(request.headers.authorization);
    if (refused) throw refused;
  };
}

/**
 * Prometheus metrics at GET /metrics (fastify-metrics over prom-client), registered after the
 * rate limit (the route is counted like any other) and before the routes it measures:
 * - `http_request_duration_seconds{method, operation, status_code, via}`: every routed request,
 *   labelled with its operationId (a route pattern outside the spec: /docs, /metrics), never its
 *   URL; `via` is `mcp` for the REST operation an MCP tool call runs, `http` otherwise. Unrouted
 *   requests (404) are not counted: their URLs are the client's;
 * - the service's own (lib/metrics/prometheus.ts): MCP tool calls, imported files, webhook
 *   attempts, job queue depths and the database's health, read on scrape and reused for
 *   METRICS_DATABASE_CACHE_MS;
 * - the process's (prom-client's default metrics: CPU, memory, event loop lag, GC).
 * Open unless METRICS_TOKEN is set (docs/operations.md). Off with METRICS_ENABLED=false: no route,
 * and `serviceMetrics` counts nothing.
 */
export const metricsPlugin = fp(
  async function metrics(app) {
    const { config, spec, db } = app;
    if (!config.metrics.enabled) {
      app.decorate('serviceMetrics', NO_METRICS);
      return;
    }
    const registry = new Registry();
    const readDatabase = databaseReader({
      db,
      ping: () => app.pingDatabase(),
      problem: () => app.databaseProblem(),
      maxTimeMS: config.readyTimeoutMs,
      cacheMs: config.metrics.databaseCacheMs,
      warn: (err, job) => app.log.warn({ err, job }, 'metrics: the job queue depth could not be read'),
    });
    app.decorate('serviceMetrics', prometheusMetrics(registry, readDatabase));

    const operationOf = operationByRoute(spec);
    // The route a request matched, as it arrived: one that finds nothing and calls the not-found handler (a Swagger UI
    // asset that does not exist) answers from a route without a pattern, which would be labelled "".
    const matchedRoute = new WeakMap<FastifyRequest, string | undefined>();
    app.addHook('onRequest', (request, _reply, done) => {
      matchedRoute.set(request, request.routeOptions.url);
      done();
    });
    // Process metrics are the process's: registered once in prom-client's default registry, whatever number of apps it runs (tests).
    const processMetrics = promClient.register.getSingleMetric('process_cpu_user_seconds_total') === undefined;
    await app.register(fastifyMetrics, {
      promClient,
      endpoint: null,
      defaultMetrics: { enabled: processMetrics },
      routeMetrics: {
        enabled: { histogram: true, summary: false },
        customLabels: { via: (request: FastifyRequest) => (isInternalDispatch(request) ? 'mcp' : 'http') },
        overrides: {
          labels: {
            route: 'operation',
            getRouteLabel: (request: FastifyRequest) => operationOf(request.method, matchedRoute.get(request) ?? request.routeOptions.url),
          },
          histogram: { buckets: LATENCY_BUCKETS, registers: [registry] },
          // The summary is off, but fastify-metrics builds it anyway: in no registry, not the shared default one.
          summary: { registers: [] },
        },
      },
    });
    // One registry over this app's metrics and the process's (the same metric objects: values stay live).
    const exposed = Registry.merge([promClient.register, registry]);
    const token = config.metrics.token;
    app.get('/metrics', { onRequest: token === null ? [] : [requireToken(token)] }, async (_request, reply) => {
      const text = await exposition(exposed);
      return reply.type(exposed.contentType).header('cache-control', 'no-store').send(text);
    });
  },
  { name: 'metrics', dependencies: ['config', 'spec', 'database', 'rate-limit'], fastify: '5.x' },
);
