/**
 * The MCP HTTP endpoints (spec/paths/mcp.yaml):
 *   POST/GET/DELETE /mcp   streamable HTTP (sessions by `mcp-session-id`)
 *   GET /sse               legacy SSE stream, announces /messages?sessionId=
 *   POST /messages         legacy JSON-RPC message endpoint
 * Each route authenticates with the REST hook (401 in the service's error
 * shape before any session exists) and is counted by the global rate limit
 * (an onRequest hook on every route). The connection is then handed to the
 * SDK transport (`reply.hijack()`), after copying the headers hooks set
 * (request id, rate limit) onto the raw response.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from 'mongodb';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { makeAuthenticate, presentedKey, tenantOf } from '../http/auth.ts';
import { ApiError, errorBody } from '../http/api-error.ts';
import { onlyQueryParameters } from '../http/hardening.ts';
import type { Json } from '../spec/deref.ts';
import { buildToolTable, type ToolDefinition } from './tools-from-spec.ts';
import { buildResources } from './resources.ts';
import { withChallenge } from './auth-challenge.ts';
import { createMcpServer, type McpAuthExtra, type McpCatalog } from './server.ts';
import { SessionRegistry, type McpSession } from './sessions.ts';
import { tenantDataRoute } from '../http/cache-control.ts';
import { limitRequests } from '../http/rate-limit.ts';
import { apiKeyCache } from '../auth/api-key-cache.ts';
import { activeKeyIds } from '../auth/api-keys.ts';

export interface McpOptions {
  /** Close sessions without any request for this long (default 30 minutes). */
  idleTimeoutMs?: number;
  /** How often idle sessions are looked for (default 60 s). */
  sweepIntervalMs?: number;
  /** Open sessions (both transports) per tenant; more get 429 (default 50). */
  maxSessionsPerTenant?: number;
  /** Open sessions (both transports) per API key, so one key cannot take the tenant's whole allowance; more get 429 (default 10). */
  maxSessionsPerKey?: number;
  /**
   * How often the keys of open sessions are checked against the database (default 10 s, the
   * API key cache's TTL: a key revoked by another process loses its sessions within that time;
   * one revoked through this process at once).
   */
  keyCheckIntervalMs?: number;
  /** SSE keep-alive comment interval on both transports' streams (default 15 s, 0 disables). */
  keepAliveMs?: number;
}

export interface RegisterMcpArgs extends McpOptions {
  db: Db;
  /** The bundled OpenAPI document (generated/openapi.json). */
  spec: Json;
  version: string;
}

export interface McpHandle {
  tools: ToolDefinition[];
  sessions: SessionRegistry;
}

const DEFAULTS = {
  idleTimeoutMs: 30 * 60_000,
  sweepIntervalMs: 60_000,
  maxSessionsPerTenant: 50,
  maxSessionsPerKey: 10,
  keepAliveMs: 15_000,
  keyCheckIntervalMs: 10_000,
} satisfies Required<McpOptions>;

/** MCP options from the environment: MCP_SESSION_IDLE_MS, MCP_SESSION_SWEEP_MS, MCP_MAX_SESSIONS_PER_TENANT, MCP_MAX_SESSIONS_PER_KEY, MCP_KEEPALIVE_MS. */
export function mcpOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): McpOptions {
  const read = (name: string, min: number, max: number): number | undefined => {
    const raw = env[name];
    if (raw === undefined || raw === '') return undefined;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
    return n;
  };
  const out: McpOptions = {};
  const idle = read('MCP_SESSION_IDLE_MS', 1000, 86_400_000);
  const sweep = read('MCP_SESSION_SWEEP_MS', 100, 3_600_000);
  const max = read('MCP_MAX_SESSIONS_PER_TENANT', 1, 100_000);
  const perKey = read('MCP_MAX_SESSIONS_PER_KEY', 1, 100_000);
  const keepAlive = read('MCP_KEEPALIVE_MS', 0, 3_600_000);
  if (idle !== undefined) out.idleTimeoutMs = idle;
  if (sweep !== undefined) out.sweepIntervalMs = sweep;
  if (max !== undefined) out.maxSessionsPerTenant = max;
  if (perKey !== undefined) out.maxSessionsPerKey = perKey;
  if (keepAlive !== undefined) out.keepAliveMs = keepAlive;
  return out;
}

const jsonRpcError = (reply: FastifyReply, status: number, code: number, message: string) =>
  reply.code(status).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });

const sessionHeader = (request: FastifyRequest): string | undefined => {
  const v = request.headers['mcp-session-id'];
  return typeof v === 'string' && v.length > 0 ? v : undefined;
};

const hasInitialize = (body: unknown): boolean => (Array.isArray(body) ? body.some((m) => isInitializeRequest(m)) : isInitializeRequest(body));

/**
 * Registers the MCP routes on `app` (call after the REST routes: tools are
 * dispatched to them). Returns the tool table and the session registry.
 */
export async function registerMcp(app: FastifyInstance, args: RegisterMcpArgs): Promise<McpHandle> {
  // Explicit options win over the environment (MCP_* variables), which wins over the defaults.
  const opts = { ...DEFAULTS, ...mcpOptionsFromEnv(process.env), ...stripUndefined(args) };
  const tools = buildToolTable(args.spec);
  const catalog: McpCatalog = { tools, resources: buildResources(args.spec, tools), version: args.version };
  // The rate limit first (requests without a valid key count per address, before any key lookup), then the key.
  const authenticate = [limitRequests(app), withChallenge(makeAuthenticate(args.db))];
  // No route here takes query parameters (but /messages its sessionId): any other is a 400, as on REST.
  const noQuery = onlyQueryParameters();
  const sessions = new SessionRegistry({
    idleTimeoutMs: opts.idleTimeoutMs,
    sweepIntervalMs: opts.sweepIntervalMs,
    onExpire: (s) => app.log.info({ sessionId: s.id, tenant: s.tenant, kind: s.kind }, 'MCP session expired (idle)'),
  });
  sessions.start();
  // A revoked key loses its sessions (both transports: streams closed, ids forgotten): at once when
  // revoked through this process, otherwise at the next check of the open sessions' keys.
  const closeRevoked = (keyId: string, how: string) =>
    void sessions.closeForKey(keyId).then((n) => {
      if (n > 0) app.log.info({ keyId, sessions: n, how }, 'MCP sessions closed: their API key was revoked');
    });
  const unsubscribe = apiKeyCache(args.db).onRevoked((keyId) => closeRevoked(keyId, 'revoked in this process'));
  let checking = false;
  const keyCheck = setInterval(() => {
    const ids = [...sessions.keyIds()];
    if (checking || ids.length === 0) return;
    checking = true;
    activeKeyIds(args.db, ids)
      .then((active) => {
        for (const id of ids) if (!active.has(id)) closeRevoked(id, 'found revoked');
      })
      // The database is down: keys are checked again next time (and requests fail authentication meanwhile).
      .catch((err: Error) => app.log.debug({ err: { message: err.message } }, 'MCP session key check failed'))
      .finally(() => {
        checking = false;
      });
  }, opts.keyCheckIntervalMs);
  keyCheck.unref();
  // Open streams would keep server.close() waiting: end them first.
  app.addHook('preClose', async () => {
    clearInterval(keyCheck);
    unsubscribe();
    await sessions.closeAll();
  });

  /** Hands the connection to the SDK: copies hook-set headers, attaches the credentials, hijacks. */
  async function handOver(request: FastifyRequest, reply: FastifyReply, run: () => Promise<void>): Promise<FastifyReply> {
    const raw = reply.raw;
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) raw.setHeader(name, value as string);
    raw.setHeader('cache-control', 'no-store');
    raw.setHeader('x-content-type-options', 'nosniff');
    // The SDK's writeHead asks for `no-cache` on event streams; tenant data stays `no-store`
    // (writeHead applies its headers through setHeader once headers were set this way).
    const setHeader = raw.setHeader.bind(raw);
    raw.setHeader = ((name: string, value: number | string | readonly string[]) =>
      name.toLowerCase() === 'cache-control' ? raw : setHeader(name, value)) as typeof raw.setHeader;
    const extra: McpAuthExtra = { tenant: tenantOf(request), requestId: request.id };
    const auth: AuthInfo = { token: presentedKey(request) ?? '', clientId: extra.tenant, scopes: [], extra };
    (request.raw as IncomingMessage & { auth?: AuthInfo }).auth = auth;
    reply.hijack();
    try {
      await run();
    } catch (err) {
      request.log.error({ err }, 'MCP transport failed');
      if (!raw.headersSent) raw.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(errorBody(500, 'Internal Server Error', [`request id ${request.id}`])));
      else if (!raw.writableEnded) raw.end();
    }
    return reply;
  }

  function checkCapacity(caller: { tenant: string; keyId: string }): void {
    if (sessions.countForKey(caller.keyId) >= opts.maxSessionsPerKey) {
      throw new ApiError(429, 'Too Many Requests', [`at most ${opts.maxSessionsPerKey} open MCP sessions per API key; end unused ones (DELETE /mcp) or let them expire`], { reason: 'too_many_sessions' });
    }
    if (sessions.countFor(caller.tenant) >= opts.maxSessionsPerTenant) {
      throw new ApiError(429, 'Too Many Requests', [`at most ${opts.maxSessionsPerTenant} open MCP sessions per tenant; end unused ones (DELETE /mcp) or let them expire`], { reason: 'too_many_sessions' });
    }
  }

  /** The caller a session is bound to. */
  const callerOf = (request: FastifyRequest) => ({ tenant: tenantOf(request), keyId: request.apiKeyId ?? '' });

  /** A JSON-RPC message endpoint given no body (an empty one with a JSON content type): nothing to hand the SDK. */
  const emptyBody = (request: FastifyRequest) => request.body === undefined;

  // --- Streamable HTTP -------------------------------------------------------

  app.post('/mcp', { onRequest: authenticate, preValidation: noQuery, config: tenantDataRoute }, async (request, reply) => {
    const caller = callerOf(request);
    const { tenant } = caller;
    const id = sessionHeader(request);
    if (emptyBody(request)) return jsonRpcError(reply, 400, -32700, 'Parse error: the body is empty (a JSON-RPC message is required)');
    if (id) {
      const session = sessions.find(id, 'streamable', caller);
      if (!session) return jsonRpcError(reply, 404, -32001, 'Session not found');
      const transport = (session as StreamableSession).transport;
      return handOver(request, reply, () => transport.handleRequest(request.raw, reply.raw, request.body));
    }
    if (!hasInitialize(request.body)) return jsonRpcError(reply, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    checkCapacity(caller);
    const server = createMcpServer(app, catalog);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      keepAliveMs: opts.keepAliveMs,
      onsessioninitialized: (sessionId) => {
        const now = Date.now();
        const session: StreamableSession = { id: sessionId, tenant, keyId: caller.keyId, kind: 'streamable', server, transport, close: () => transport.close(), createdAt: now, lastSeen: now };
        sessions.add(session);
        request.log.info({ sessionId, tenant }, 'MCP session opened (streamable HTTP)');
      },
      onsessionclosed: (sessionId) => sessions.remove(sessionId),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.remove(transport.sessionId);
    };
    await server.connect(transport);
    await handOver(request, reply, () => transport.handleRequest(request.raw, reply.raw, request.body));
    // The initialize request was refused by the transport: nothing to keep.
    if (!transport.sessionId) await server.close();
    return reply;
  });

  // Event streams have no HEAD form (it would open a stream with nothing to send).
  app.get('/mcp', { onRequest: authenticate, preValidation: noQuery, exposeHeadRoute: false, config: tenantDataRoute }, async (request, reply) => {
    const id = sessionHeader(request);
    if (!id) return jsonRpcError(reply, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    const session = sessions.find(id, 'streamable', callerOf(request));
    if (!session) return jsonRpcError(reply, 404, -32001, 'Session not found');
    const transport = (session as StreamableSession).transport;
    return handOver(request, reply, () => transport.handleRequest(request.raw, reply.raw));
  });

  app.delete('/mcp', { onRequest: authenticate, preValidation: noQuery, config: tenantDataRoute }, async (request, reply) => {
    const id = sessionHeader(request);
    if (!id) return jsonRpcError(reply, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    const session = sessions.find(id, 'streamable', callerOf(request));
    if (!session) return jsonRpcError(reply, 404, -32001, 'Session not found');
    const transport = (session as StreamableSession).transport;
    await handOver(request, reply, () => transport.handleRequest(request.raw, reply.raw));
    sessions.remove(id);
    return reply;
  });

  // --- Legacy HTTP+SSE -----------------------------------------------------

  app.get('/sse', { onRequest: authenticate, preValidation: noQuery, exposeHeadRoute: false, config: tenantDataRoute }, async (request, reply) => {
    const caller = callerOf(request);
    const { tenant } = caller;
    checkCapacity(caller);
    const server = createMcpServer(app, catalog);
    const transport = new SSEServerTransport('/messages', reply.raw);
    const now = Date.now();
    const session: SseSession = { id: transport.sessionId, tenant, keyId: caller.keyId, kind: 'sse', server, transport, close: () => transport.close(), createdAt: now, lastSeen: now };
    let keepAlive: NodeJS.Timeout | undefined;
    transport.onclose = () => {
      if (keepAlive) clearInterval(keepAlive);
      sessions.remove(session.id);
    };
    return handOver(request, reply, async () => {
      sessions.add(session);
      await server.connect(transport); // writes the head and the `endpoint` event
      request.log.info({ sessionId: session.id, tenant }, 'MCP session opened (legacy SSE)');
      if (opts.keepAliveMs > 0) {
        keepAlive = setInterval(() => {
          if (!reply.raw.writableEnded) reply.raw.write(': keepalive\n\n');
        }, opts.keepAliveMs);
        keepAlive.unref();
      }
    });
  });

  app.post('/messages', { onRequest: authenticate, preValidation: onlyQueryParameters(['sessionId']), config: tenantDataRoute }, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    const id = typeof query.sessionId === 'string' && query.sessionId.length > 0 ? query.sessionId : undefined;
    if (!id) throw new ApiError(400, 'Invalid query parameter', ['sessionId is required'], { reason: 'invalid_parameter', fields: [{ in: 'query', name: 'sessionId', detail: 'sessionId is required' }] });
    const session = sessions.find(id, 'sse', callerOf(request));
    if (!session) throw new ApiError(404, 'Not Found', [`no open MCP session ${id}`]);
    if (emptyBody(request)) {
      const detail = 'a JSON-RPC message is required (the body is empty)';
      throw new ApiError(400, 'Invalid request body', [detail], { reason: 'invalid_body', fields: [{ in: 'body', name: '', detail }] });
    }
    const transport = (session as SseSession).transport;
    return handOver(request, reply, () => transport.handlePostMessage(request.raw, reply.raw, request.body));
  });

  const handle: McpHandle = { tools, sessions };
  app.decorate('mcp', handle);
  return handle;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The MCP tool table and open sessions (absent when buildApp ran with `mcp: false`). */
    mcp?: McpHandle;
  }
}

interface StreamableSession extends McpSession {
  transport: StreamableHTTPServerTransport;
}
interface SseSession extends McpSession {
  transport: SSEServerTransport;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
