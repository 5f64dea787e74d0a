/**
 * MCP's streamable HTTP transport (spec/paths/mcp.yaml: mcpPost, mcpStream,
 * mcpDeleteSession): POST/GET/DELETE /mcp, sessions by `mcp-session-id`, one
 * McpServer per session.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { tenantDataRoute } from '../http/cache-control.ts';

/** Tenant data; OAuth access tokens count here as well as API keys (lib/http/auth.ts). */
const mcpRoute = { ...tenantDataRoute, acceptsAccessTokens: true };
import { createMcpServer } from './server.ts';
import type { McpSession } from './sessions.ts';
import { emptyBody, type SessionHost } from './session-host.ts';
import { parseToolSelection } from './toolsets.ts';

interface StreamableSession extends McpSession {
  transport: StreamableHTTPServerTransport;
}

const jsonRpcError = (reply: FastifyReply, status: number, code: number, message: string) =>
  reply.code(status).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });

const sessionHeader = (request: FastifyRequest): string | undefined => {
  const v = request.headers['mcp-session-id'];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
};

const hasInitialize = (body: unknown): boolean => (Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body));

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

  app.post('/mcp', route, async (request, reply) => {
    if (emptyBody(request)) return jsonRpcError(reply, 400, -32700, 'Parse error: the body is empty (a JSON-RPC message is required)');
    if (sessionHeader(request)) {
      const session = sessionOf(request, reply);
      if (!isSession(session)) return session;
      return host.handOver(request, reply, () => session.transport.handleRequest(request.raw, reply.raw, request.body));
    }
    if (!hasInitialize(request.body)) return jsonRpcError(reply, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    const caller = host.callerOf(request);
    host.checkCapacity(caller);
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
        request.log.info({ sessionId, tenant: caller.tenant }, 'MCP session opened (streamable HTTP)');
      },
      onsessionclosed: (sessionId) => sessions.remove(sessionId),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.remove(transport.sessionId);
    };
    await server.connect(transport);
    await host.handOver(request, reply, () => transport.handleRequest(request.raw, reply.raw, request.body));
    // The initialize request was refused by the transport: nothing to keep.
    if (!transport.sessionId) await server.close();
    return reply;
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
