import { context, trace, SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import fp from 'fastify-plugin';
import { createTracing, type Tracing } from '../tracing/tracing.ts';
import { traceMongoCommands } from '../tracing/mongodb-spans.ts';
import { operationByRoute } from '../spec/operation-by-route.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** OpenTelemetry tracing (lib/tracing/tracing.ts): a no-op tracer unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
    tracing: Tracing;
  }
  interface FastifyRequest {
    /** The request's server span (a no-op one when tracing is off). */
    span: Span | null;
  }
}

/**
 * Traces (OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set, off otherwise), registered first
 * among the plugins with hooks so every later hook, the handler and the database commands run
 * inside the request's span:
 * - a server span per request, named `GET listFinancialDocs` (operationId, else route pattern),
 *   continuing the `traceparent` header when the request carries a valid one; the REST operation
 *   an MCP tool call runs is a child of the tool call's span (lib/mcp/server.ts);
 * - a client span per MongoDB command, when the client monitors commands (scripts/start.ts
 *   creates it so when tracing is on).
 * Spans still buffered are sent when the app closes.
 */
export const tracingPlugin = fp(
  async function tracing(app) {
    const { config, spec, db } = app;
    const tracing = await createTracing({ endpoint: config.tracing.endpoint, serviceName: config.tracing.serviceName, serviceVersion: spec.info.version });
    app.decorate('tracing', tracing);
    app.decorateRequest('span', null);
    if (!tracing.enabled) return;
    const { continuedContext } = await import('../tracing/trace-context.ts');
    const { tracer } = tracing;
    const operationOf = operationByRoute(spec);

    app.addHook('onRequest', (request, _reply, done) => {
      const operation = operationOf(request.method, request.routeOptions.url);
      // A traceparent from the client, else the context current here (an MCP tool call's span for its inner dispatch).
      const parent = continuedContext(request.headers, context.active());
      // No URL: a path may hold ids or even a key a client misplaced (the request log redacts those); the route pattern says enough.
      const span = tracer.startSpan(
        `${request.method} ${operation || 'unrouted'}`,
        {
          kind: SpanKind.SERVER,
          attributes: {
            'http.request.method': request.method,
            ...(request.routeOptions.url ? { 'http.route': request.routeOptions.url } : {}),
            ...(operation ? { 'freight.operation': operation } : {}),
          },
        },
        parent,
      );
      request.span = span;
      context.with(trace.setSpan(parent, span), done);
    });
    app.addHook('onResponse', (request, reply, done) => {
      const span = request.span;
      if (span) {
        span.setAttribute('http.response.status_code', reply.statusCode);
        if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      }
      done();
    });

    const mongoClient = db.client;
    if (mongoClient.options.monitorCommands) {
      const stop = traceMongoCommands(mongoClient, tracer);
      app.addHook('onClose', async () => stop());
    } else {
      app.log.info('tracing: MongoDB commands are not traced (the database client was created without monitorCommands)');
    }
    // Plugins close in reverse order of registration: this runs after the later ones (draining workers), and sends their spans too.
    app.addHook('onClose', async () => {
      await tracing.shutdown();
    });
  },
  { name: 'tracing', dependencies: ['config', 'spec', 'database'], fastify: '5.x' },
);
