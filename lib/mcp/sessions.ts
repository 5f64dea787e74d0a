/**
 * Open MCP sessions of both transports. A session belongs to the API key (and
 * so the tenant) that opened it: a lookup with another key (or the other
 * transport's kind) finds nothing, exactly like an unknown id. Sessions idle
 * longer than `idleTimeoutMs` (no HTTP request naming them) are closed by a
 * sweep timer; the sessions of a revoked key are closed (`closeForKey`).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

export type SessionKind = 'streamable' | 'sse';

export interface McpSession {
  id: string;
  tenant: string;
  /** Public id of the API key that opened it (lib/auth/api-keys.ts keyId). */
  keyId: string;
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
  /** Sessions being opened (counted against the caps until added or given up). */
  private readonly opening = new Set<{ tenant: string; keyId: string }>();
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

  /** The session, only for the key that opened it (so its tenant) and its transport; touches it. */
  find(id: string, kind: SessionKind, caller: { tenant: string; keyId: string }): McpSession | undefined {
    const s = this.sessions.get(id);
    if (!s || s.kind !== kind || s.tenant !== caller.tenant || s.keyId !== caller.keyId) return undefined;
    s.lastSeen = this.now();
    return s;
  }

  remove(id: string): void {
    this.sessions.delete(id);
  }

  /**
   * Holds a place for a session about to be opened, at once (no await between the check of the caps and
   * this): concurrent opens each see the others. The returned function gives it up; call it when the
   * session is added or its opening ends without one (idempotent).
   */
  reserve(caller: { tenant: string; keyId: string }): () => void {
    const place = { tenant: caller.tenant, keyId: caller.keyId };
    this.opening.add(place);
    return () => void this.opening.delete(place);
  }

  /** Open sessions and those being opened, of a tenant. */
  countFor(tenant: string): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.tenant === tenant) n += 1;
    for (const o of this.opening) if (o.tenant === tenant) n += 1;
    return n;
  }

  /** Open sessions and those being opened, of a key. */
  countForKey(keyId: string): number {
    let n = 0;
    for (const s of this.sessions.values()) if (s.keyId === keyId) n += 1;
    for (const o of this.opening) if (o.keyId === keyId) n += 1;
    return n;
  }

  /** The keys that have open sessions. */
  keyIds(): Set<string> {
    return new Set([...this.sessions.values()].map((s) => s.keyId));
  }

  /** Closes every session of a key (revoked); resolves with how many. */
  async closeForKey(keyId: string): Promise<number> {
    const closing = [...this.sessions.values()].filter((s) => s.keyId === keyId);
    for (const s of closing) this.sessions.delete(s.id);
    await Promise.allSettled(closing.map((s) => s.close()));
    return closing.length;
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
