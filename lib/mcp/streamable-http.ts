/**
 * MCP's streamable HTTP transport (spec/paths/mcp.yaml: mcpPost, mcpStream,
 * mcpDeleteSession): POST/GET/DELETE /mcp, sessions by `mcp-session-id`, one
 * McpServer per session.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { tenantDataRoute } from '../http/cache-control.ts';

/** Tenant data; OAuth access tokens count here as well as API keys (lib/http/auth.ts). */
const mcpRoute = { ...tenantDataRoute, acceptsAccessTokens: true };
import { sessionRuntime } from './session-runtime.ts';
import type { McpSession } from './sessions.ts';
import { emptyBody, mcpBodyLimit, type SessionHost } from './session-host.ts';
import { parseToolSelection } from './toolsets.ts';
import { abandon, eventsSoFar, watchClient } from './client-gone.ts';
import { insufficientScopeChallenge, insufficientScopeDetail, uncoveredCalls, type UncoveredCall } from './scope-challenge.ts';
import { errorBody } from '../http/api-error.ts';
import type { ApiScope } from '../auth/api-key-record.ts';

interface StreamableSession extends McpSession {
  transport: StreamableHTTPServerTransport;
}

/** JSON-RPC's implementation-defined server error range (-32000 to -32099): the call was refused for want of a scope. */
export const INSUFFICIENT_SCOPE_CODE = -32003;

const jsonRpcError = (reply: FastifyReply, status: number, code: number, message: string) =>
  reply.code(status).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });

/**
 * The 403 of a tools/call the credential's scopes do not cover (lib/mcp/scope-challenge.ts): the
 * challenge in `WWW-Authenticate`, and a JSON-RPC error answering each request of the message (none
 * of them ran), carrying the REST refusal's body in `data`.
 */
function refuseScope(reply: FastifyReply, body: unknown, uncovered: UncoveredCall[], held: ApiScope[], resourceMetadata: string | undefined) {
  const detail = insufficientScopeDetail(uncovered);
  const error = { code: INSUFFICIENT_SCOPE_CODE, message: `Forbidden: ${detail}`, data: errorBody(403, 'Forbidden', [detail]) };
  const ids = (Array.isArray(body) ? (body as unknown[]) : [body])
    .filter((m): m is { id: string | number } => typeof m === 'object' && m !== null && 'id' in m)
    .map((m) => (typeof m.id === 'string' || typeof m.id === 'number' ? m.id : null));
  const answers = ids.map((id) => ({ jsonrpc: '2.0', id, error }));
  reply.header('www-authenticate', insufficientScopeChallenge(uncovered, held, resourceMetadata));
  return reply
    .code(403)
    .type('application/json')
    .send(Array.isArray(body) ? answers : answers[0]);
}

const sessionHeader = (request: FastifyRequest): string | undefined => {
  const v = request.headers['mcp-session-id'];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
};

/** Whether the body is a JSON-RPC 2.0 message, or a non-empty batch of them: the shape alone (the SDK reads the rest). */
function allMessages(body: unknown): boolean {
  const isMessage = (m: unknown): boolean =>
    typeof m === 'object' &&
    m !== null &&
    !Array.isArray(m) &&
    (m as { jsonrpc?: unknown }).jsonrpc === '2.0' &&
    (typeof (m as { method?: unknown }).method === 'string' || 'result' in m || 'error' in m);
  return Array.isArray(body) ? body.length > 0 && body.every(isMessage) : isMessage(body);
}

const hasInitialize = (body: unknown, isInitializeRequest: (m: unknown) => boolean): boolean =>
  Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body);

const INVALID_REQUEST =
  'Invalid Request: each message is an object with "jsonrpc": "2.0" and a "method" (a request or a notification) or a "result" or an "error" (a response)';

type SessionRuntime = Awaited<ReturnType<typeof sessionRuntime>>;

/**
 * What the SDK's transport would refuse of a POST as a whole (none of its messages run), as it would answer it:
 * found before the message is handed over, because handing over charges a batch's tool calls to the key's budget
 * (session-host.ts), and a refused batch costs what a refused request costs, not one request per call it carried.
 */
function refusedWhole(request: FastifyRequest, runtime: SessionRuntime, opening: boolean): [number, number, string] | undefined {
  const body = request.body;
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  const accept = String(request.headers.accept ?? '');
  if (!accept.includes('application/json') || !accept.includes('text/event-stream'))
    return [406, -32000, 'Not Acceptable: Client must accept both application/json and text/event-stream'];
  if (messages.length > runtime.maxBatchSize) return [400, -32600, `Invalid Request: Batch must not exceed ${runtime.maxBatchSize} messages`];
  // A message the SDK's schema refuses (an id that is null, an object or a fraction) is an invalid request too, not its "parse error".
  if (!messages.every(runtime.isJsonRpcMessage)) return [400, -32600, INVALID_REQUEST];
  const initializing = hasInitialize(body, runtime.isInitializeRequest);
  if (opening) return initializing && messages.length > 1 ? [400, -32600, 'Invalid Request: Only one initialization request is allowed'] : undefined;
  if (initializing) return [400, -32600, 'Invalid Request: Server already initialized'];
  const version = request.headers['mcp-protocol-version'];
  if (typeof version === 'string' && !runtime.supportedProtocolVersions.includes(version))
    return [400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${runtime.supportedProtocolVersions.join(', ')})`];
  return undefined;
}

export function registerStreamableHttp(host: SessionHost): void {
  const { app, sessions, authenticate, toolSelectionQuery } = host;
  // Clients send every request of a session to the URL they were given: its toolsets come along, read at initialize.
  const route = { onRequest: authenticate, preValidation: toolSelectionQuery, config: mcpRoute };

  /** The open session a request names, or the JSON-RPC error that ends it. */
  const sessionOf = (request: FastifyRequest, reply: FastifyReply): StreamableSession | FastifyReply => {
    const id = sessionHeader(request);
    if (!id) return jsonRpcError(reply, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    const session = sessions.find(id, 'streamable', host.callerOf(request));
    return session ? (session as StreamableSession) : jsonRpcError(reply, 404, -32001, 'Session not found');
  };
  const isSession = (s: StreamableSession | FastifyReply): s is StreamableSession => 'transport' in s;

  app.post('/mcp', { ...route, bodyLimit: mcpBodyLimit(app.config) }, async (request, reply) => {
    if (emptyBody(request)) return jsonRpcError(reply, 400, -32700, 'Parse error: the body is empty (a JSON-RPC message is required)');
    // JSON that is not a JSON-RPC message is an invalid request (JSON-RPC 2.0 §5.1: -32600), not a parse error as the SDK says.
    if (!allMessages(request.body)) return jsonRpcError(reply, 400, -32600, INVALID_REQUEST);
    const held = host.scopesOf(request);
    const uncovered = uncoveredCalls(request.body, host.toolsByName, held);
    if (uncovered.length) return refuseScope(reply, request.body, uncovered, held, host.resourceMetadataOf(request));
    if (sessionHeader(request)) {
      const session = sessionOf(request, reply);
      if (!isSession(session)) return session;
      const refused = refusedWhole(request, await sessionRuntime(), false);
      if (refused) return jsonRpcError(reply, ...refused);
      return host.handOver(request, reply, () => session.transport.handleRequest(request.raw, reply.raw, request.body));
    }
    // Watched from here: a session whose client left before its id reached it is of no use to anyone (lib/mcp/client-gone.ts).
    const client = watchClient(request.raw, reply.raw);
    const runtime = await sessionRuntime();
    const { createMcpServer, StreamableHTTPServerTransport, isInitializeRequest } = runtime;
    if (!hasInitialize(request.body, isInitializeRequest)) return jsonRpcError(reply, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    const refused = refusedWhole(request, runtime, true);
    if (refused) return jsonRpcError(reply, ...refused);
    const caller = host.callerOf(request);
    // Held from the check on: concurrent initialize requests each count the others (docs/mcp.md, the caps).
    const release = host.reserveSession(caller);
    try {
      // What the connection has already told (its client leaving) is seen before a session is made for it.
      await eventsSoFar();
      if (client.gone) return abandon(reply);
      const server = createMcpServer(app, host.catalog, parseToolSelection(request.query as Record<string, unknown>, host.catalog.tools));
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        keepAliveMs: host.options.keepAliveMs,
        onsessioninitialized: (sessionId) => {
          const now = Date.now();
          const session: StreamableSession = {
            id: sessionId,
            tenant: caller.tenant,
            keyId: caller.keyId,
            kind: 'streamable',
            server,
            transport,
            close: () => transport.close(),
            createdAt: now,
            lastSeen: now,
          };
          sessions.add(session);
          release(); // the session counts itself now
          request.log.info({ sessionId, tenant: caller.tenant }, 'MCP session opened (streamable HTTP)');
        },
        onsessionclosed: (sessionId) => sessions.remove(sessionId),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.remove(transport.sessionId);
      };
      await server.connect(transport);
      await host.handOver(request, reply, () => transport.handleRequest(request.raw, reply.raw, request.body));
      // The initialize request was refused by the transport, or its client left before the answer (and the session id) reached it:
      // nothing to keep (closing the transport removes the session); a client leaving while the answer is still on its way, the same.
      const leftEarly = () =>
        request.log.info({ sessionId: transport.sessionId, tenant: caller.tenant }, 'MCP session closed: its client left before the answer');
      if (!transport.sessionId) await server.close();
      else if (client.gone) {
        leftEarly();
        await server.close();
      } else
        client.onGone(() => {
          leftEarly();
          void server.close().catch(() => undefined);
        });
      return reply;
    } finally {
      release();
    }
  });

  // Event streams have no HEAD form (it would open a stream with nothing to send).
  app.get('/mcp', { ...route, exposeHeadRoute: false }, async (request, reply) => {
    const session = sessionOf(request, reply);
    if (!isSession(session)) return session;
    return host.handOver(request, reply, () => session.transport.handleRequest(request.raw, reply.raw));
  });

  app.delete('/mcp', route, async (request, reply) => {
    const session = sessionOf(request, reply);
    if (!isSession(session)) return session;
    await host.handOver(request, reply, () => session.transport.handleRequest(request.raw, reply.raw));
    sessions.remove(session.id);
    return reply;
  });
}
