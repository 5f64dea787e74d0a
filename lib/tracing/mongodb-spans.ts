import { context, SpanKind, SpanStatusCode, type Span, type Tracer } from '@opentelemetry/api';
import type { CommandFailedEvent, CommandStartedEvent, CommandSucceededEvent, MongoClient } from 'mongodb';

/** Commands in flight with a span; past this many (a stuck server), new ones get none: memory stays bounded. */
const MAX_OPEN_SPANS = 10_000;
/** The driver's own chatter, not the service's queries. */
const UNTRACED = new Set(['hello', 'ismaster', 'isMaster', 'ping', 'saslStart', 'saslContinue', 'endSessions', 'killCursors']);

/**
 * A client span per database command (`find alertJobs`), child of the span current where the
 * command was sent (the request's, the job's, the tool call's), from the driver's command
 * monitoring: the client must be created with `monitorCommands: true` (scripts/start.ts does when
 * tracing is on). The command's filter and documents are never recorded, only its name, the
 * collection and the database. Returns a function that stops listening.
 */
export function traceMongoCommands(client: MongoClient, tracer: Tracer): () => void {
  const open = new Map<string, Span>();
  const key = (e: { connectionId?: string | number; requestId: number }) => `${String(e.connectionId)}:${e.requestId}`;
  const started = (e: CommandStartedEvent) => {
    if (UNTRACED.has(e.commandName) || open.size >= MAX_OPEN_SPANS) return;
    const target: unknown = e.command[e.commandName];
    const collection = typeof target === 'string' ? target : undefined;
    const span = tracer.startSpan(
      collection ? `${e.commandName} ${collection}` : e.commandName,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.system.name': 'mongodb',
          'db.namespace': e.databaseName,
          'db.operation.name': e.commandName,
          ...(collection ? { 'db.collection.name': collection } : {}),
        },
      },
      context.active(),
    );
    open.set(key(e), span);
  };
  const succeeded = (e: CommandSucceededEvent) => {
    const span = open.get(key(e));
    if (!span) return;
    open.delete(key(e));
    span.end();
  };
  const failed = (e: CommandFailedEvent) => {
    const span = open.get(key(e));
    if (!span) return;
    open.delete(key(e));
    span.setStatus({ code: SpanStatusCode.ERROR, message: e.failure.message });
    span.end();
  };
  client.on('commandStarted', started);
  client.on('commandSucceeded', succeeded);
  client.on('commandFailed', failed);
  return () => {
    client.off('commandStarted', started);
    client.off('commandSucceeded', succeeded);
    client.off('commandFailed', failed);
    for (const span of open.values()) span.end();
    open.clear();
  };
}
