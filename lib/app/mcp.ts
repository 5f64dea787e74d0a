import fp from 'fastify-plugin';
import { registerMcp, type McpOptions } from '../mcp/transports.ts';

/**
 * The MCP endpoints (/mcp, /sse, /messages), after the REST routes: tools are dispatched to
 * them. Open sessions' keys are checked as often as a resolved key is trusted: a revoked key
 * loses them within API_KEY_CACHE_TTL_MS. Decorates `mcp` (lib/mcp/transports.ts).
 */
export const mcpPlugin = fp<McpOptions>(
  async function mcp(app, options) {
    const { config, db, spec } = app;
    await registerMcp(app, { keyCheckIntervalMs: Math.max(config.apiKeyCacheTtlMs, 1000), ...config.mcp, ...options, db, spec, version: spec.info.version });
  },
  { name: 'mcp', dependencies: ['config', 'database', 'caches', 'spec', 'rate-limit', 'auth', 'api', 'metrics', 'tracing'], fastify: '5.x' },
);
