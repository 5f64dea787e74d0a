/**
 * The MCP HTTP endpoints (spec/paths/mcp.yaml): streamable HTTP at /mcp
 * (streamable-http.ts) and the legacy SSE transport at /sse + /messages
 * (legacy-sse.ts), over one catalogue and one session registry
 * (session-host.ts). Each route authenticates with the REST hook (401 in the
 * service's error shape before any session exists) after the rate limit; the
 * connection is then handed to the SDK transport (`reply.hijack()`), after
 * copying the headers hooks set (request id, rate limit) onto the raw response.
 */
import type { FastifyInstance } from 'fastify';
import type { Db } from 'mongodb';
import type { Json } from '../spec/deref.ts';
import { buildToolTable, type ToolDefinition } from './tools-from-spec.ts';
import { buildResources } from './resources.ts';
import type { McpCatalog } from './server.ts';
import type { SessionRegistry } from './sessions.ts';
import { resolveMcpOptions, type McpOptions } from './options.ts';
import { createSessionHost } from './session-host.ts';
import { registerStreamableHttp } from './streamable-http.ts';
import { registerLegacySse } from './legacy-sse.ts';

export { type McpOptions } from './options.ts';

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

/**
 * Registers the MCP routes on `app` (call after the REST routes: tools are
 * dispatched to them). Returns the tool table and the session registry.
 */
export async function registerMcp(app: FastifyInstance, args: RegisterMcpArgs): Promise<McpHandle> {
  const { db, spec, version, ...explicit } = args;
  const tools = buildToolTable(spec);
  const catalog: McpCatalog = { tools, resources: buildResources(spec, tools), version };
  const host = createSessionHost(app, db, catalog, resolveMcpOptions(explicit));
  registerStreamableHttp(host);
  registerLegacySse(host);
  const handle: McpHandle = { tools, sessions: host.sessions };
  app.decorate('mcp', handle);
  return handle;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The MCP tool table and open sessions (absent when buildApp ran with `mcp: false`). */
    mcp?: McpHandle;
  }
}
