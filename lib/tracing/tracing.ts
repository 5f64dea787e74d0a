/**
 * OpenTelemetry traces, off unless an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT):
 * a tracer provider of the app's own (never the API's global one: tests build many apps in one
 * process), spans batched and sent by OTLP/HTTP (JSON) to `<endpoint>/v1/traces`. Off, the tracer
 * is the API's no-op one: spans cost next to nothing and go nowhere.
 */
import { context, trace, type Tracer } from '@opentelemetry/api';
import { onFirstUse } from '../shared/on-first-use.ts';

/** The SDK that records and exports spans: loaded only when an endpoint is configured (off by default; ~0.15 CPU-s to load). */
const sdk = onFirstUse(async () => {
  const [hooks, resources, base, exporter] = await Promise.all([
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  return {
    AsyncLocalStorageContextManager: hooks.AsyncLocalStorageContextManager,
    resourceFromAttributes: resources.resourceFromAttributes,
    BasicTracerProvider: base.BasicTracerProvider,
    BatchSpanProcessor: base.BatchSpanProcessor,
    OTLPTraceExporter: exporter.OTLPTraceExporter,
  };
});
type Sdk = Awaited<ReturnType<typeof sdk>>;

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

/** Async context (which span is current) follows promises: set once per process, whichever app asks first. */
function ensureContextManager({ AsyncLocalStorageContextManager }: Sdk): void {
  const manager = new AsyncLocalStorageContextManager();
  // Returns false when one is set already (another app of this process): that one serves.
  if (context.setGlobalContextManager(manager.enable())) return;
  manager.disable();
}

export async function createTracing(opts: TracingOptions): Promise<Tracing> {
  if (opts.endpoint === null) {
    const tracer = trace.getTracer('freight-backoffice-api');
    return { tracer, enabled: false, flush: async () => {}, shutdown: async () => {} };
  }
  const lib = await sdk();
  ensureContextManager(lib);
  const provider = new lib.BasicTracerProvider({
    resource: lib.resourceFromAttributes({ 'service.name': opts.serviceName, 'service.version': opts.serviceVersion }),
    spanProcessors: [new lib.BatchSpanProcessor(new lib.OTLPTraceExporter({ url: `${opts.endpoint}/v1/traces` }))],
  });
  return {
    tracer: provider.getTracer('freight-backoffice-api', opts.serviceVersion),
    enabled: true,
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
