/**
 * Open MCP sessions of both transports. A session belongs to the tenant that
 * opened it: a lookup with another tenant (or the other transport's kind)
 * finds nothing, exactly like an unknown id. Sessions idle longer than
 * `idleTimeoutMs` (no HTTP request naming them) are closed by a sweep timer.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

export type SessionKind = 'streamable' | 'sse';

export interface McpSession {
  id: string;
  tenant: string;
  kind: SessionKind;
  server: McpServer;
  /** Closes the transport (ends its streams). */
  close(): Promise<void>;
  createdAt: number;
  lastSeen: number;
}

export interface SessionRegistryOptions {
  idleTimeoutMs: number;
  sweepIntervalMs: number;
  now?: () => number;
  onExpire?: (session: McpSession) => void;
}

export class SessionRegistry {
  private readonly sessions = new Map<string, McpSession>();
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: SessionRegistryOptions) {
    this.now = opts.now ?? Date.now;
  }

  get size(): number {
    return this.sessions.size;
  }

  add(session: McpSession): void {
    this.sessions.set(session.id, session);
  }

  /** The session, only for its own tenant and transport; touches it. */
  find(id: string, kind: SessionKind, tenant: string): McpSession | undefined {
    const s = this.sessions.get(id);
    if (!s || s.kind !== kind || s.tenant !== tenant) return undefined;
    s.lastSeen = this.now();
    return s;
  }

  remove(id: string): void {
    this.sessions.delete(id);
  }

  countFor(tenant: string): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.tenant === tenant) n += 1;
    return n;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.sweep(), this.opts.sweepIntervalMs);
    this.timer.unref();
  }

  /** Closes sessions idle for longer than the timeout; resolves with how many. */
  async sweep(): Promise<number> {
    const cutoff = this.now() - this.opts.idleTimeoutMs;
    const idle = [...this.sessions.values()].filter((s) => s.lastSeen < cutoff);
    for (const s of idle) {
      this.sessions.delete(s.id);
      this.opts.onExpire?.(s);
    }
    await Promise.allSettled(idle.map((s) => s.close()));
    return idle.length;
  }

  /** Stops the sweep and closes every session (server shutdown). */
  async closeAll(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(all.map((s) => s.close()));
  }
}
