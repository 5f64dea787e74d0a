/**
 * OpenTelemetry traces, off unless an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT):
 * a tracer provider of the app's own (never the API's global one: tests build many apps in one
 * process), spans batched and sent by OTLP/HTTP (JSON) to `<endpoint>/v1/traces`. Off, the tracer
 * is the API's no-op one: spans cost next to nothing and go nowhere.
 */
import { context, trace, ROOT_CONTEXT, type Context, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';

export interface Tracing {
  tracer: Tracer;
  /** Whether spans are exported (an endpoint is configured). */
  enabled: boolean;
  /** Sends the spans ended so far. */
  flush(): Promise<void>;
  /** Sends what is left and stops. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** OTLP base URL (`/v1/traces` is appended), or null: off. */
  endpoint: string | null;
  serviceName: string;
  serviceVersion: string;
}

const propagator = new W3CTraceContextPropagator();
const headerGetter = {
  keys: (carrier: Record<string, unknown>) => Object.keys(carrier),
  get: (carrier: Record<string, unknown>, key: string) => {
    const value = carrier[key];
    return typeof value === 'string' || Array.isArray(value) ? (value as string | string[]) : undefined;
  },
};

/**
 * The context a `traceparent` (and `tracestate`) in `carrier` (request headers, MCP `_meta`)
 * continues, else `fallback`. A malformed traceparent is ignored (W3C Trace Context: start a new trace).
 */
export function continuedContext(carrier: Record<string, unknown> | undefined, fallback: Context): Context {
  if (!carrier || typeof carrier.traceparent !== 'string') return fallback;
  const extracted = propagator.extract(ROOT_CONTEXT, carrier, headerGetter);
  return trace.getSpanContext(extracted) ? extracted : fallback;
}

/** Async context (which span is current) follows promises: set once per process, whichever app asks first. */
function ensureContextManager(): void {
  const manager = new AsyncLocalStorageContextManager();
  // Returns false when one is set already (another app of this process): that one serves.
  if (context.setGlobalContextManager(manager.enable())) return;
  manager.disable();
}

export function createTracing(opts: TracingOptions): Tracing {
  if (opts.endpoint === null) {
    const tracer = trace.getTracer('freight-backoffice-api');
    return { tracer, enabled: false, flush: async () => {}, shutdown: async () => {} };
  }
  ensureContextManager();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName, 'service.version': opts.serviceVersion }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${opts.endpoint}/v1/traces` }))],
  });
  return {
    tracer: provider.getTracer('freight-backoffice-api', opts.serviceVersion),
    enabled: true,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
