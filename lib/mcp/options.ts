/**
 * MCP session options: explicit options win over the defaults. The service's come from its
 * configuration (MCP_* variables, lib/config-schema.ts), passed in by scripts/start.ts.
 */
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

export const MCP_DEFAULTS = {
  idleTimeoutMs: 30 * 60_000,
  sweepIntervalMs: 60_000,
  maxSessionsPerTenant: 50,
  maxSessionsPerKey: 10,
  keepAliveMs: 15_000,
  keyCheckIntervalMs: 10_000,
} satisfies Required<McpOptions>;

/** The settings lib/config.ts reads from the environment (MCP_* variables); the key check interval follows the API key cache's TTL. */
export type McpSessionSettings = Omit<Required<McpOptions>, 'keyCheckIntervalMs'>;

/** The options in force: explicit ones over the defaults (the service passes its configuration's, AppConfig.mcp). */
export function resolveMcpOptions(explicit: McpOptions): Required<McpOptions> {
  return { ...MCP_DEFAULTS, ...stripUndefined(explicit) };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
