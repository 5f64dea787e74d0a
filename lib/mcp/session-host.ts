/**
 * What both MCP transports share: the catalogue, the session registry with its
 * caps and key revocation, the route hooks (rate limit, then the key, then no
 * unknown query parameter), and the hand-over of a connection to the SDK.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler, preValidationHookHandler } from 'fastify';
import type { Db } from 'mongodb';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { knownCaller, makeAuthenticate, presentedKey, tenantOf } from '../http/auth.ts';
import type { ApiScope } from '../auth/api-key-record.ts';
import type { ToolDefinition } from './tools-from-spec.ts';
import { ApiError, errorBody } from '../http/api-error.ts';
import { onlyQueryParameters } from '../http/hardening.ts';
import { chargeRequests, limitRequests } from '../http/rate-limit.ts';
import { activeKeyIds } from '../auth/api-keys.ts';
import { withChallenge } from './auth-challenge.ts';
import { resourceMetadataUrl } from '../oauth/resource-urls.ts';
import type { McpAuthExtra, McpCatalog } from './server.ts';
import { SessionRegistry } from './sessions.ts';
import { parseToolSelection, TOOL_SELECTION_QUERY } from './toolsets.ts';
import type { McpOptions } from './options.ts';
import type { AppConfig } from '../config.ts';

/** The caller a session is bound to. */
export interface McpCaller {
  tenant: string;
  keyId: string;
}

export interface SessionHost {
  app: FastifyInstance;
  catalog: McpCatalog;
  sessions: SessionRegistry;
  options: Required<McpOptions>;
  /** onRequest hooks of every MCP route: the rate limit first (keyless requests count per address before any key lookup), then the key (401 with a challenge). */
  authenticate: onRequestHookHandler[];
  /** preValidation of the routes a session's URL reaches: only `toolsets` and `readOnly`, valid (lib/mcp/toolsets.ts); any other is a 400, as on REST. */
  toolSelectionQuery: preValidationHookHandler[];
  callerOf(request: FastifyRequest): McpCaller;
  /** The scopes of the request's credential (a token's: those granted that its key still has). */
  scopesOf(request: FastifyRequest): ApiScope[];
  /** The protected resource metadata URL a challenge on this route names (none: OAuth off). */
  resourceMetadataOf(request: FastifyRequest): string | undefined;
  /** Every tool of the catalogue by name. */
  toolsByName: ReadonlyMap<string, ToolDefinition>;
  /**
   * Holds a place for a session the caller opens, or throws 429 too_many_sessions when its key or tenant has its
   * allowance of open sessions (those being opened count). Answers the function that gives the place up.
   */
  reserveSession(caller: McpCaller): () => void;
  /** Hands the connection to the SDK: copies hook-set headers, attaches the credentials, hijacks. */
  handOver(request: FastifyRequest, reply: FastifyReply, run: () => Promise<void>): Promise<FastifyReply>;
}

/**
 * The largest JSON-RPC message a session's POST takes: the largest body any tool's REST operation
 * takes (an import's files, a deliveries CSV), so a tool takes over MCP what its operation takes
 * over REST; each tool's own limit still applies to its body when dispatched (a 413 tool error).
 */
export const mcpBodyLimit = (config: Pick<AppConfig, 'bodyLimitBytes' | 'deliveriesBodyLimitBytes' | 'imports'>): number =>
  Math.max(config.bodyLimitBytes, config.deliveriesBodyLimitBytes, config.imports.bodyLimitBytes);

/** A JSON-RPC message endpoint given no body (an empty one with a JSON content type): nothing to hand the SDK. */
export const emptyBody = (request: FastifyRequest): boolean => request.body === undefined;

export function createSessionHost(app: FastifyInstance, db: Db, catalog: McpCatalog, options: Required<McpOptions>): SessionHost {
  const sessions = new SessionRegistry({
    idleTimeoutMs: options.idleTimeoutMs,
    sweepIntervalMs: options.sweepIntervalMs,
    onExpire: (s) => app.log.info({ sessionId: s.id, tenant: s.tenant, kind: s.kind }, 'MCP session expired (idle)'),
  });
  sessions.start();
  closeSessionsOfRevokedKeys(app, db, sessions, options.keyCheckIntervalMs);
  // Open streams would keep server.close() waiting: end them first.
  app.addHook('preClose', async () => {
    await sessions.closeAll();
  });

  const charge = chargeRequests(app, app.config.rateLimit.windowMs);

  async function handOver(request: FastifyRequest, reply: FastifyReply, run: () => Promise<void>): Promise<FastifyReply> {
    // Each tool call is one REST operation's request: a batch's calls after its first (which the POST itself counted)
    // are charged before any runs, and a budget that does not cover them all refuses the whole message.
    const calls = toolCallsIn(request.body);
    const spent = calls > 1 ? await charge(request, reply, calls - 1) : null;
    if (spent) return reply.send(spent);
    const raw = reply.raw;
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) raw.setHeader(name, value);
    raw.setHeader('cache-control', 'no-store');
    raw.setHeader('x-content-type-options', 'nosniff');
    // The SDK's writeHead asks for `no-cache` on event streams; tenant data stays `no-store`
    // (writeHead applies its headers through setHeader once headers were set this way).
    const setHeader = raw.setHeader.bind(raw);
    raw.setHeader = (name: string, value: number | string | readonly string[]) => (name.toLowerCase() === 'cache-control' ? raw : setHeader(name, value));
    const extra: McpAuthExtra = { tenant: tenantOf(request), requestId: request.id };
    const auth: AuthInfo = { token: presentedKey(request) ?? '', clientId: extra.tenant, scopes: [], extra };
    (request.raw as IncomingMessage & { auth?: AuthInfo }).auth = auth;
    reply.hijack();
    try {
      await run();
    } catch (err) {
      request.log.error({ err }, 'MCP transport failed');
      if (!raw.headersSent)
        raw.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(errorBody(500, 'Internal Server Error', [`request id ${request.id}`])));
      else if (!raw.writableEnded) raw.end();
    }
    return reply;
  }

  function reserveSession(caller: McpCaller): () => void {
    if (sessions.countForKey(caller.keyId) >= options.maxSessionsPerKey) {
      throw new ApiError(
        429,
        'Too Many Requests',
        [`at most ${options.maxSessionsPerKey} open MCP sessions per API key; end unused ones (DELETE /mcp) or let them expire`],
        { reason: 'too_many_sessions' },
      );
    }
    if (sessions.countFor(caller.tenant) >= options.maxSessionsPerTenant) {
      throw new ApiError(
        429,
        'Too Many Requests',
        [`at most ${options.maxSessionsPerTenant} open MCP sessions per tenant; end unused ones (DELETE /mcp) or let them expire`],
        { reason: 'too_many_sessions' },
      );
    }
    return sessions.reserve(caller);
  }

  // The streamable endpoint is the MCP server's resource; the legacy SSE pair announce theirs (lib/oauth/resource-urls.ts).
  const resourceMetadataOf = (request: FastifyRequest): string | undefined =>
    app.config.oauth.enabled ? resourceMetadataUrl(app.config.oauth.issuer, request.routeOptions.url === '/mcp' ? '/mcp' : '/sse') : undefined;

  return {
    app,
    catalog,
    sessions,
    options,
    authenticate: [limitRequests(app), withChallenge(makeAuthenticate(db), resourceMetadataOf)],
    toolSelectionQuery: [
      onlyQueryParameters(TOOL_SELECTION_QUERY),
      async (request: FastifyRequest) => {
        parseToolSelection(request.query as Record<string, unknown>, catalog.tools);
      },
    ],
    callerOf: (request) => ({ tenant: tenantOf(request), keyId: request.apiKeyId ?? '' }),
    scopesOf: (request) => {
      const caller = knownCaller(request);
      return caller?.kind === 'valid' ? caller.key.scopes : [];
    },
    resourceMetadataOf,
    toolsByName: new Map(catalog.tools.map((t) => [t.name, t])),
    reserveSession,
    handOver,
  };
}

/** The `tools/call` requests a JSON-RPC message (or batch) carries. */
function toolCallsIn(body: unknown): number {
  const isCall = (m: unknown): boolean => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'tools/call';
  return Array.isArray(body) ? body.filter(isCall).length : isCall(body) ? 1 : 0;
}

/**
 * A revoked key loses its sessions (both transports: streams closed, ids forgotten): at once when
 * revoked through this process, otherwise at the next check of the open sessions' keys.
 */
function closeSessionsOfRevokedKeys(app: FastifyInstance, db: Db, sessions: SessionRegistry, intervalMs: number): void {
  const closeRevoked = (keyId: string, how: string) =>
    void sessions.closeForKey(keyId).then((n) => {
      if (n > 0) app.log.info({ keyId, sessions: n, how }, 'MCP sessions closed: their API key was revoked');
    });
  const unsubscribe = app.apiKeyCache.onRevoked((keyId) => closeRevoked(keyId, 'revoked in this process'));
  let checking = false;
  const keyCheck = setInterval(() => {
    const ids = [...sessions.keyIds()];
    if (checking || ids.length === 0) return;
    checking = true;
    activeKeyIds(db, ids)
      .then((active) => {
        for (const id of ids) if (!active.has(id)) closeRevoked(id, 'found revoked');
      })
      // The database is down: keys are checked again next time (and requests fail authentication meanwhile).
      .catch((err: Error) => app.log.debug({ err: { message: err.message } }, 'MCP session key check failed'))
      .finally(() => {
        checking = false;
      });
  }, intervalMs);
  keyCheck.unref();
  app.addHook('preClose', async () => {
    clearInterval(keyCheck);
    unsubscribe();
  });
}
