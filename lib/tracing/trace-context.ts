/**
 * W3C Trace Context: the trace a request or a tool call continues. A module of its own (with
 * @opentelemetry/core) so that only what continues traces loads it: the request hook when tracing
 * is on (lib/app/tracing.ts) and an MCP session's tool calls (lib/mcp/server.ts), not every
 * process that builds the app (issue 39).
 */
import { trace, ROOT_CONTEXT, type Context } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

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
