/**
 * MCP session options: explicit options win over the environment (MCP_* variables), which wins
 * over the defaults.
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

/** The options in force: explicit ones over the environment's over the defaults. */
export function resolveMcpOptions(explicit: McpOptions, env: NodeJS.ProcessEnv = process.env): Required<McpOptions> {
  return { ...MCP_DEFAULTS, ...mcpOptionsFromEnv(env), ...stripUndefined(explicit) };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
