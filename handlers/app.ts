import type { Server } from 'node:http';
import Fastify, { LogController, type FastifyHttpOptions, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Db } from 'mongodb';
import type { AppConfig } from '../lib/config.ts';
import { createHandlers, type HandlerDeps } from './index.ts';
import { apiPlugin } from './api.ts';
import { clientErrorHandler, frameworkErrors, keylessApiPrefixes, rewriteUnroutable } from '../lib/http/hardening.ts';
import { listOperations } from '../lib/spec/operations.ts';
import { bundledSpec } from '../lib/app/spec.ts';
import { genRequestId } from '../lib/http/request-id.ts';
import { logSerializers, REDACTED_HEADER_PATHS } from '../lib/http/log-redaction.ts';
import type { McpOptions } from '../lib/mcp/transports.ts';
import { configPlugin } from '../lib/app/config.ts';
import { specPlugin } from '../lib/app/spec.ts';
import { databasePlugin } from '../lib/app/database.ts';
import { tracingPlugin } from '../lib/app/tracing.ts';
import { cachesPlugin } from '../lib/app/caches.ts';
import { connectionLimitsPlugin } from '../lib/app/connection-limits.ts';
import { authPlugin } from '../lib/app/auth.ts';
import { validationPlugin } from '../lib/app/validation.ts';
import { corsPlugin } from '../lib/app/cors.ts';
import { errorsPlugin } from '../lib/app/errors.ts';
import { bodyParsersPlugin } from '../lib/app/body-parsers.ts';
import { requestIdPlugin } from '../lib/app/request-id.ts';
import { requestLogPlugin } from '../lib/app/request-log.ts';
import { responseHeadersPlugin } from '../lib/app/response-headers.ts';
import { rateLimitPlugin } from '../lib/app/rate-limit.ts';
import { compressionPlugin } from '../lib/app/compression.ts';
import { notFoundPlugin } from '../lib/app/not-found.ts';
import { unroutablePlugin } from '../lib/app/unroutable.ts';
import { metricsPlugin } from '../lib/app/metrics.ts';
import { docsPlugin } from '../lib/app/docs.ts';
import { shutdownPlugin } from '../lib/app/shutdown.ts';
import { jsonMediaTypesPlugin } from '../lib/app/json-media-types.ts';
import { deadlinesPlugin } from '../lib/app/deadlines.ts';
import { reportTurnsPlugin } from '../lib/app/report-turns.ts';
import { mcpPlugin } from '../lib/app/mcp.ts';
import { oauthPlugin } from '../lib/app/oauth.ts';
import { workersPlugin } from '../lib/app/workers.ts';
import { keptOpenAsOfPage } from '../lib/analytics/kept-open-as-of-page.ts';

export { SPEC_PATH, loadSpec } from '../lib/app/spec.ts';

/** What extra plugins get from the service: the handlers' dependencies and whether workers run here (ALERT_WORKER). */
export type PluginDeps = HandlerDeps & { worker: boolean };

export interface BuildAppOptions {
  config: AppConfig;
  db: Db;
  /** Pings the database, resolves with the latency in ms. */
  pingDatabase?: () => Promise<number>;
  logger?: FastifyServerOptions['logger'];
  now?: () => Date;
  /** Extra plugins registered after the REST routes (the alerts and webhooks workers: lib/alerts/plugin.ts, lib/webhooks/plugin.ts). */
  plugins?: ((app: FastifyInstance, deps: PluginDeps) => Promise<void>)[];
  /** MCP endpoints (/mcp, /sse, /messages) options; `false` leaves them out. Default: on, default options. */
  mcp?: McpOptions | false;
  /** Why the database is known to be down without asking it (the embedded engine restarting, from its launcher: scripts/start.ts): /ready answers 503 at once. */
  databaseProblem?: () => string | null;
  /** Why this process must be restarted (the embedded engine could not be, from its launcher: scripts/start.ts): /health answers 503. */
  livenessProblem?: () => string | null;
}

/** The server's own options: logging, request ids, timeouts, the HTTP parser's errors, proxies, closing. */
function serverOptions(config: AppConfig, logger: BuildAppOptions['logger']): FastifyHttpOptions<Server> {
  // Credentials never logged: headers by path, URLs (`?api_key=…`) by the request serializer (lib/http/log-redaction.ts).
  const logDefaults = { level: config.logLevel, redact: REDACTED_HEADER_PATHS, serializers: logSerializers };
  return {
    logger:
      logger === undefined || logger === true
        ? logDefaults
        : logger === false
          ? false
          : { ...logDefaults, ...logger, serializers: { ...logSerializers, ...logger.serializers } },
    genReqId: genRequestId,
    requestIdHeader: false,
    // One log line per request (lib/app/request-log.ts) instead of Fastify's two: at LOG_LEVEL=info
    // logging was ~40 % of a cheap request's cost (docs/benchmarks.md, "Per-request work").
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    requestTimeout: config.requestTimeoutMs,
    // Slow clients get 408 within about a second of the limit (Node checks every 30 s by default).
    // Headers within HEADERS_TIMEOUT_MS of the connection or of the request's first byte (a
    // connection that sends nothing, slowloris); kept-alive connections idle for
    // KEEP_ALIVE_TIMEOUT_MS (72 s, Fastify's default) are closed. lib/http/connection-limits.ts.
    http: { requestTimeout: config.requestTimeoutMs, headersTimeout: config.connections.headersTimeoutMs, connectionsCheckingInterval: 1000 },
    keepAliveTimeout: config.connections.keepAliveTimeoutMs,
    // 408/431/400 from the HTTP parser in the error shape (lib/http/hardening.ts).
    clientErrorHandler,
    frameworkErrors,
    // A path the router would refuse before any hook meets the rate limit and authentication first (lib/app/unroutable.ts).
    rewriteUrl: unroutableRewrite(),
    trustProxy: config.trustProxy,
    // While closing, requests already on open connections are still served (with
    // `connection: close`); the server stops accepting new connections.
    return503OnClosing: false,
    // Every GET also answers HEAD (same hooks, headers only).
    exposeHeadRoutes: true,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
    // Plugins start on the database (indexes, the kept totals' state): on a loaded 2-core machine the
    // OAuth server's first RSA key and oidc-provider's import alone passed Fastify's 10 s (they are
    // made by the first OAuth request now, lib/oauth/authorization-server.ts; the margin stays).
    pluginTimeout: 60_000,
  };
}

/** `rewriteUnroutable` knowing which /api/ paths need no key (from the bundled document, before any plugin). */
function unroutableRewrite(): (req: { url?: string }) => string {
  const keyless = keylessApiPrefixes(listOperations(bundledSpec()));
  return (req) => rewriteUnroutable(req, keyless);
}

/** What the handlers (and the extra plugins) are built from, read off the app's decorators. */
function handlerDeps(app: FastifyInstance, now: (() => Date) | undefined): HandlerDeps {
  const { config } = app;
  return {
    db: app.db,
    config,
    now: now ?? (() => new Date()),
    openAsOfPage: keptOpenAsOfPage,
    startedAt: Date.now(),
    version: app.spec.info.version,
    webhooks: config.webhooks,
    exports: config.exports,
    alerts: config.alerts,
    readyTimeoutMs: config.readyTimeoutMs,
    databaseProblem: app.databaseProblem,
    livenessProblem: app.livenessProblem,
    shutdown: app.shutdown,
    pingDatabase: app.pingDatabase,
    metrics: app.serviceMetrics,
  };
}

/**
 * The service as an ordered list of plugins (lib/app/, one per thing it provides; each names the
 * plugins it needs). The order is the order of their hooks and of the routes they see:
 * - infrastructure: configuration, the bundled spec, the database, tracing (its request span
 *   first, so every later hook runs inside it), the caches, connection caps,
 *   who calls (request decorations and authentication hooks, added to routes later);
 * - HTTP core: validation, CORS (its preflight before the rate limit and auth, its catch-all
 *   OPTIONS route before the route index), errors (the route index sees every route after it),
 *   body parsers, request id, the request's log line, response headers, the rate limit (before
 *   any route it counts), compression, not found (itself rate limited), metrics (GET /metrics,
 *   rate limited; before the routes it measures);
 * - docs: Swagger and Swagger UI, serving the bundled document;
 * - closing (`shutdown`), bare JSON media types, deadlines, report budgets and turns;
 * - the API: the spec's operations through glue (authentication as an onRequest hook, so 401
 *   comes before 400); then MCP (dispatches to those routes) with OAuth for its hosted clients, and the workers.
 */
export async function buildApp(opts: BuildAppOptions): Promise<FastifyInstance> {
  const { config } = opts;
  const app = Fastify(serverOptions(config, opts.logger));
  await app.register(configPlugin, { config });
  await app.register(specPlugin);
  await app.register(databasePlugin, {
    db: opts.db,
    pingDatabase: opts.pingDatabase,
    databaseProblem: opts.databaseProblem,
    livenessProblem: opts.livenessProblem,
  });
  await app.register(tracingPlugin);
  await app.register(cachesPlugin);
  await app.register(connectionLimitsPlugin);
  await app.register(authPlugin);
  await app.register(validationPlugin);
  await app.register(corsPlugin);
  await app.register(errorsPlugin);
  await app.register(bodyParsersPlugin);
  await app.register(requestIdPlugin);
  await app.register(requestLogPlugin);
  await app.register(responseHeadersPlugin);
  await app.register(rateLimitPlugin);
  await app.register(compressionPlugin);
  await app.register(notFoundPlugin);
  await app.register(unroutablePlugin);
  await app.register(metricsPlugin);
  await app.register(docsPlugin);
  await app.register(shutdownPlugin);
  await app.register(jsonMediaTypesPlugin);
  await app.register(deadlinesPlugin);
  await app.register(reportTurnsPlugin);
  const deps = handlerDeps(app, opts.now);
  await app.register(apiPlugin, { handlers: createHandlers(deps) });
  if (opts.mcp !== false) {
    await app.register(mcpPlugin, opts.mcp ?? {});
    await app.register(oauthPlugin);
  }
  await app.register(workersPlugin, {
    plugins: (opts.plugins ?? []).map((plugin) => (instance: FastifyInstance) => plugin(instance, { ...deps, worker: config.worker })),
  });
  return app;
}
