import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions, type RouteHandlerMethod, type RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import openapiGlue from 'fastify-openapi-glue';
import type { Db } from 'mongodb';
import type { AppConfig } from '../lib/config.ts';
import { createHandlers, type HandlerDeps } from './index.ts';
import type { OperationId } from './types.ts';
import { routePolicy } from './route-policy.ts';
import { makeAuthenticate } from '../lib/http/auth.ts';
import { apiKeyCache } from '../lib/auth/api-key-cache.ts';
import { settingsCache } from '../lib/settings/settings-cache.ts';
import { registerResponseHeaders, tenantDataRoute } from '../lib/http/cache-control.ts';
import { makeErrorHandlers } from '../lib/http/error-handler.ts';
import { clientErrorHandler, frameworkErrors, onlyQueryParameters, requestDeadline, requireBody, routeMethodIndex } from '../lib/http/hardening.ts';
import { genRequestId } from '../lib/http/request-id.ts';
import { limitConnections } from '../lib/http/connection-limits.ts';
import { tenantConcurrency } from '../lib/http/tenant-concurrency.ts';
import { validatorCompilerFor } from '../lib/http/validator-compiler.ts';
import { webhookUrlRefiners } from '../lib/webhooks/url-validation.ts';
import { registerBinaryBodies } from '../lib/http/binary-bodies.ts';
import { registerJsonBody } from '../lib/http/json-body.ts';
import { firstServer, withFirstServer } from '../lib/http/served-document.ts';
import { logSerializers, REDACTED_HEADER_PATHS } from '../lib/http/log-redaction.ts';
import { limitRequests, registerRateLimit, reportBudget } from '../lib/http/rate-limit.ts';
import { registerCompression, registerCors } from '../lib/http/compression-and-cors.ts';
import { bareJsonMediaTypes } from '../lib/http/json-media-type.ts';
import { listOperations } from '../lib/spec/operations.ts';
import type { Json } from '../lib/spec/deref.ts';
import { registerMcp, type McpOptions } from '../lib/mcp/transports.ts';

export const SPEC_PATH = new URL('../generated/openapi.json', import.meta.url);
/** The bundled OpenAPI document, read once at start-up. */
export const loadSpec = (): Json & { info: { version: string } } => JSON.parse(readFileSync(SPEC_PATH, 'utf8')) as Json & { info: { version: string } };

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

/**
 * The copy of the spec glue builds routes from. Glue warns about every media type of the
 * document that has no content-type parser, responses included, though only request bodies
 * are ever parsed; the responses' other media types (the version 1 lists'
 * `application/vnd.freight.v1+json`) are left out of its copy. Responses are shaped by the
 * domain layer and serialised as JSON whatever their schema (see setSerializerCompiler).
 */
function glueSpecification(spec: Json): object {
  const copy = structuredClone(spec) as { paths?: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, unknown> }> }>> };
  for (const item of Object.values(copy.paths ?? {})) {
    for (const op of Object.values(item)) {
      for (const response of Object.values(op?.responses ?? {})) {
        if (!response?.content) continue;
        for (const type of Object.keys(response.content)) if (type !== 'application/json') delete response.content[type];
      }
    }
  }
  return copy;
}

/**
 * Plugins in order: request id and errors, rate limit (before any route),
 * Swagger, then the spec's operations through glue with authentication as an
 * onRequest hook (so 401 comes before 400), then MCP and other extras.
 */
export async function buildApp(opts: BuildAppOptions): Promise<FastifyInstance> {
  const { config, db } = opts;
  const spec = loadSpec();
  // Credentials never logged: headers by path, URLs (`?api_key=…`) by the request serializer (lib/http/log-redaction.ts).
  const logDefaults = { level: config.logLevel, redact: REDACTED_HEADER_PATHS, serializers: logSerializers };
  const logger =
    opts.logger === undefined || opts.logger === true
      ? logDefaults
      : opts.logger === false
        ? false
        : { ...logDefaults, ...opts.logger, serializers: { ...logSerializers, ...opts.logger.serializers } };
  const app = Fastify({
    logger,
    genReqId: genRequestId,
    requestIdHeader: false,
    // One log line per request (below) instead of Fastify's two: at LOG_LEVEL=info logging
    // was ~40 % of a cheap request's cost (docs/benchmarks.md, "Per-request work").
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
    trustProxy: config.trustProxy,
    // While closing, requests already on open connections are still served (with
    // `connection: close`); the server stops accepting new connections.
    return503OnClosing: false,
    // Every GET also answers HEAD (same hooks, headers only).
    exposeHeadRoutes: true,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
  });
  // Connection caps, global (below the open-file limit) and per client address: before it listens.
  limitConnections(app.server, config.connections, app.log);
  app.decorateRequest('tenant', null);
  app.decorateRequest('apiKeyId', null);
  app.setValidatorCompiler(validatorCompilerFor({ refiners: webhookUrlRefiners(config.webhooks) }));
  // Responses are shaped by the domain layer and checked against the spec in tests;
  // unions (detail levels, versions) make schema-driven serialisation slower, not safer.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // CORS first: its preflight answers before rate limit and auth, and its catch-all OPTIONS route stays out of the index below.
  await registerCors(app, config.corsOrigins);
  // A known path with another method is 405 with `allow` (the index sees every route registered below).
  const { errorHandler, notFoundHandler } = makeErrorHandlers(routeMethodIndex(app).methodsFor);
  app.setErrorHandler(errorHandler);
  // Bodies are JSON only: anything else is 415 (Fastify would otherwise hand text/plain bodies through unvalidated).
  app.removeContentTypeParser('text/plain');
  // XML and zip bodies only where the spec declares them (POST /api/imports); 415 elsewhere.
  registerBinaryBodies(app);
  // An empty body with a JSON content type is no body (MCP Python SDK's DELETE /mcp), not a 400.
  registerJsonBody(app);

  // Callback-style hooks: they run on every request, and an async hook costs a promise each time.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // The request's one log line, once answered (hijacked MCP streams included): method, URL,
  // status, time, and the tenant once authenticated (request.log is then the tenant's child logger).
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    done();
  });
  registerResponseHeaders(app);

  await registerRateLimit(app, { ...config.rateLimit, redisUrl: config.redisUrl, db });
  // Listed first on secured routes: the budget is counted before the key is looked up.
  const limit = limitRequests(app);
  await registerCompression(app);
  app.setNotFoundHandler({ preHandler: limit }, notFoundHandler);

  // Swagger reads the same bundled file the service runs on.
  await app.register(swagger, { mode: 'static', specification: { path: fileURLToPath(SPEC_PATH), baseDir: fileURLToPath(new URL('.', SPEC_PATH)) } });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { persistAuthorization: true },
    // The served document names this service as its first server, so Swagger UI and generated
    // clients call it: PUBLIC_BASE_URL, a loopback address as fetched, else `/` (never a Host echoed).
    transformSpecificationClone: true,
    transformSpecification: (document, request) =>
      withFirstServer(document as { servers?: { url: string; description?: string }[] }, firstServer(request, config.publicBaseUrl)),
  });

  // Aborted as the service starts closing: imports in flight stop at their next batch and answer 503.
  const shutdown = new AbortController();
  // server.close() ends only the keep-alive connections idle at that instant: one whose answer was
  // being sent as closing began turns idle later, without `connection: close`, and would hold the
  // close for KEEP_ALIVE_TIMEOUT_MS. Sweep the idle ones until the server has closed.
  let idleSweep: NodeJS.Timeout | undefined;
  app.addHook('preClose', (done) => {
    shutdown.abort();
    idleSweep = setInterval(() => app.server.closeIdleConnections(), 100);
    idleSweep.unref();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearInterval(idleSweep);
    done();
  });
  // A request in flight when closing starts is served, and its connection then closed: left
  // open (keep-alive), it would hold the server's close until the client lets go.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (shutdown.signal.aborted) reply.header('connection', 'close');
    done(null, payload);
  });
  bareJsonMediaTypes(app);
  const deps: HandlerDeps = {
    db,
    config,
    now: opts.now ?? (() => new Date()),
    startedAt: Date.now(),
    version: spec.info.version,
    webhooks: config.webhooks,
    alerts: config.alerts,
    readyTimeoutMs: config.readyTimeoutMs,
    databaseProblem: opts.databaseProblem ?? (() => null),
    livenessProblem: opts.livenessProblem ?? (() => null),
    shutdown: shutdown.signal,
    pingDatabase:
      opts.pingDatabase ??
      (async () => {
        const t0 = performance.now();
        await db.command({ ping: 1 }, { timeoutMS: config.readyTimeoutMs });
        return Math.round((performance.now() - t0) * 10) / 10;
      }),
  };
  const handlers = createHandlers(deps);
  // Per-request reads that change rarely: resolved keys and tenant settings (TTLs from config).
  apiKeyCache(db).ttlMs = config.apiKeyCacheTtlMs;
  apiKeyCache(db).negativeTtlMs = config.apiKeyNegativeCacheTtlMs;
  settingsCache(db).ttlMs = config.settingsCacheTtlMs;
  // Reading needs the `read` scope, anything that changes state the `write` scope.
  const authenticateRead = makeAuthenticate(db, 'read');
  const authenticateWrite = makeAuthenticate(db, 'write');
  const operations = new Map(listOperations(spec).map((op) => [op.operationId, op]));
  const noQueryParameters = onlyQueryParameters();
  // Year-long reports cost seconds: a budget of their own per key, after authentication (spec: x-rate-limit-budget).
  const limitReports = reportBudget(app, { max: config.rateLimit.reportMax, windowMs: config.rateLimit.windowMs });
  // …and run one tenant's at a time, so they cannot take every database thread from other tenants.
  const reportTurns = tenantConcurrency({ perTenant: config.rateLimit.reportConcurrency, queue: config.rateLimit.reportQueue });
  // Per-operation policy is stated in the spec (x-request-deadline, x-body-limit, x-rate-limit, x-compress: handlers/route-policy.ts).
  // Imports of thousands of files (or of a month of delivery tickets) take minutes: their own, longer deadline (IMPORT_TIMEOUT_MS).
  const deadlines = { default: [requestDeadline(config.requestTimeoutMs)], imports: [requestDeadline(config.imports.timeoutMs)], none: [] };
  // Imports take whole archives, deliveries a month of tickets; every other body stays within BODY_LIMIT_BYTES.
  const bodyLimits = { default: undefined, imports: config.imports.bodyLimitBytes, deliveries: config.deliveriesBodyLimitBytes };

  await app.register(openapiGlue, {
    specification: glueSpecification(spec),
    operationResolver: (operationId: string, method: string, url: string) => {
      const handler = handlers[operationId as OperationId];
      if (!handler) throw new Error(`no handler for operation ${operationId}`);
      const op = operations.get(operationId);
      const policy = routePolicy(operationId, op?.extensions ?? {});
      const bodyLimit = bodyLimits[policy.bodyLimit];
      const route: RouteOptions = {
        method: method.toUpperCase(),
        url: op?.route ?? url,
        // Validation has checked the request against this operation's schemas: its typed handler serves the route.
        handler: handler as RouteHandlerMethod,
        // The deadline starts first: authentication reads the database too; the rate limit before
        // authentication (requests without a valid key count per address).
        onRequest: op?.secured
          ? [
              ...deadlines[policy.deadline],
              limit,
              op.method === 'GET' ? authenticateRead : authenticateWrite,
              ...(op.extensions['x-rate-limit-budget'] === 'reports' ? [limitReports, reportTurns.acquire] : []),
            ]
          : [...deadlines[policy.deadline]],
        ...(op?.extensions['x-rate-limit-budget'] === 'reports' ? { onResponse: [reportTurns.release] } : {}),
        // Unknown query parameters are a 400 everywhere: the validators say so where the spec lists some.
        preValidation: [...(op?.querystring ? [] : [noQueryParameters]), ...(op?.bodyRequired ? [requireBody] : [])],
        ...(bodyLimit === undefined ? {} : { bodyLimit }),
        config: op?.secured ? tenantDataRoute : policy.rateLimited ? {} : { rateLimit: false },
        ...(policy.compressed ? {} : { compress: false, decompress: false }),
      };
      return route;
    },
  });

  // Open sessions' keys are checked as often as a resolved key is trusted: a revoked key loses them within API_KEY_CACHE_TTL_MS.
  if (opts.mcp !== false)
    await registerMcp(app, { keyCheckIntervalMs: Math.max(config.apiKeyCacheTtlMs, 1000), ...opts.mcp, db, spec, version: spec.info.version });
  for (const plugin of opts.plugins ?? []) await plugin(app, { ...deps, worker: config.worker });
  return app;
}
