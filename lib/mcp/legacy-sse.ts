/**
 * MCP's legacy HTTP+SSE transport (spec/paths/mcp.yaml: mcpLegacySse,
 * mcpLegacyMessage): GET /sse opens the stream and announces
 * /messages?sessionId=, POST /messages carries the client's JSON-RPC messages.
 */
import type { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { ApiError } from '../http/api-error.ts';
import { onlyQueryParameters } from '../http/hardening.ts';
import { tenantDataRoute } from '../http/cache-control.ts';

/** Tenant data; OAuth access tokens count here as well as API keys (lib/http/auth.ts). */
const mcpRoute = { ...tenantDataRoute, acceptsAccessTokens: true };
import { sessionRuntime } from './session-runtime.ts';
import type { McpSession } from './sessions.ts';
import { emptyBody, mcpBodyLimit, type SessionHost } from './session-host.ts';
import { parseToolSelection } from './toolsets.ts';
import { abandon, eventsSoFar, watchClient } from './client-gone.ts';
import { issuerPath } from '../oauth/server-paths.ts';
import { insufficientScopeChallenge, insufficientScopeDetail, uncoveredCalls } from './scope-challenge.ts';

interface SseSession extends McpSession {
  transport: SSEServerTransport;
}

export function registerLegacySse(host: SessionHost): void {
  const { app, sessions, authenticate } = host;

  app.get('/sse', { onRequest: authenticate, preValidation: host.toolSelectionQuery, exposeHeadRoute: false, config: mcpRoute }, async (request, reply) => {
    // Watched from here: a client that leaves before the stream starts is never seen by the transport (lib/mcp/client-gone.ts).
    const client = watchClient(request.raw, reply.raw);
    const caller = host.callerOf(request);
    // Held from the check on, across the runtime's first load: concurrent opens each count the others.
    const release = host.reserveSession(caller);
    try {
      // What the connection has already told (its client leaving) is seen before a session is made for it.
      await eventsSoFar();
      if (client.gone) return abandon(reply);
      const { createMcpServer, SSEServerTransport } = await sessionRuntime();
      const server = createMcpServer(app, host.catalog, parseToolSelection(request.query as Record<string, unknown>, host.catalog.tools));
      // The endpoint event names a path the client reaches: behind a proxy's path prefix (the issuer's), that prefix's.
      const transport = new SSEServerTransport(`${issuerPath(app.config.oauth.issuer)}/messages`, reply.raw);
      const now = Date.now();
      const session: SseSession = {
        id: transport.sessionId,
        tenant: caller.tenant,
        keyId: caller.keyId,
        kind: 'sse',
        server,
        transport,
        close: () => transport.close(),
        createdAt: now,
        lastSeen: now,
      };
      let keepAlive: NodeJS.Timeout | undefined;
      transport.onclose = () => {
        if (keepAlive) clearInterval(keepAlive);
        sessions.remove(session.id);
      };
      return await host.handOver(request, reply, async () => {
        sessions.add(session);
        release(); // the session counts itself now
        await server.connect(transport); // writes the head and the `endpoint` event
        if (client.gone) {
          // Started on a closed connection: the transport's own `close` listener came too late. Closing it removes the session.
          request.log.info({ sessionId: session.id, tenant: caller.tenant }, 'MCP session closed: its client left while it was opened (legacy SSE)');
          await server.close();
          return;
        }
        request.log.info({ sessionId: session.id, tenant: caller.tenant }, 'MCP session opened (legacy SSE)');
        if (host.options.keepAliveMs > 0) {
          keepAlive = setInterval(() => {
            if (!reply.raw.writableEnded) reply.raw.write(': keepalive\n\n');
          }, host.options.keepAliveMs);
          keepAlive.unref();
        }
      });
    } finally {
      release();
    }
  });

  const messages = { onRequest: authenticate, preValidation: onlyQueryParameters(['sessionId']), config: mcpRoute, bodyLimit: mcpBodyLimit(app.config) };
  app.post('/messages', messages, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const id = typeof query.sessionId === 'string' && query.sessionId.length > 0 ? query.sessionId : undefined;
    if (!id)
      throw new ApiError(400, 'Invalid query parameter', ['sessionId is required'], {
        reason: 'invalid_parameter',
        fields: [{ in: 'query', name: 'sessionId', detail: 'sessionId is required' }],
      });
    const session = sessions.find(id, 'sse', host.callerOf(request));
    if (!session) throw new ApiError(404, 'Not Found', [`no open MCP session ${id}`]);
    if (emptyBody(request)) {
      const detail = 'a JSON-RPC message is required (the body is empty)';
      throw new ApiError(400, 'Invalid request body', [detail], { reason: 'invalid_body', fields: [{ in: 'body', name: '', detail }] });
    }
    // The transport reads one message per POST, never a batch, and refuses the whole POST otherwise: refused here,
    // before the handover would charge the tool calls of a batch it never runs (session-host.ts).
    if (!(await sessionRuntime()).isJsonRpcMessage(request.body)) {
      const detail = Array.isArray(request.body)
        ? 'the legacy SSE transport takes one JSON-RPC message per POST, not a batch: send each message on its own'
        : 'a JSON-RPC 2.0 message is required: an object with "jsonrpc": "2.0" and a "method" (a request or a notification) or a "result" or an "error" (a response)';
      throw new ApiError(400, 'Invalid request body', [detail], { reason: 'invalid_body', fields: [{ in: 'body', name: '', detail }] });
    }
    const held = host.scopesOf(request);
    const uncovered = uncoveredCalls(request.body, host.toolsByName, held);
    if (uncovered.length) {
      // The step-up challenge as on /mcp; the body is the service's error shape, as every refusal of /messages.
      void reply.header('www-authenticate', insufficientScopeChallenge(uncovered, held, host.resourceMetadataOf(request)));
      throw new ApiError(403, 'Forbidden', [insufficientScopeDetail(uncovered)]);
    }
    const transport = (session as SseSession).transport;
    return host.handOver(request, reply, () => transport.handlePostMessage(request.raw, reply.raw, request.body));
  });
}
