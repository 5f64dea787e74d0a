/**
 * Connection limits (issue 33): what an HTTP client may hold open, whatever it sends.
 *
 * - Global cap: `server.maxConnections` (MAX_CONNECTIONS), below the process's file-descriptor
 *   soft limit so that the database pool, Redis, files and the engine's pipes always find a
 *   descriptor. Node closes a connection over it as it is accepted (no parser, no answer).
 * - Per-address cap (MAX_CONNECTIONS_PER_ADDRESS): open connections are counted per client
 *   address (an IPv6 client per /64, the block one host gets) in the server's 'connection'
 *   event; one over the cap is reset at once, before a byte of it is read. It counts the
 *   socket's peer: behind a proxy (TRUST_PROXY) that is the proxy, so the cap is off there by
 *   default (lib/config.ts) and the proxy should cap its clients.
 * - Timeouts (set where the server is created, handlers/app.ts): the request headers must be
 *   complete within HEADERS_TIMEOUT_MS of the connection (or of the request's first byte on a
 *   kept-alive connection), so a connection that sends nothing or dribbles its headers byte by
 *   byte (slowloris) is answered 408 and closed then; a kept-alive connection idle for
 *   KEEP_ALIVE_TIMEOUT_MS between requests is closed.
 *
 * Refusals are logged as one warning per interval with their count, never one line per socket.
 */
import { readFileSync } from 'node:fs';
import { isIPv6, type Socket } from 'node:net';
import type { Server } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';

/** Descriptors left out of the default global cap: at least this many, or a fifth of the limit. */
export const FD_RESERVE_MIN = 256;

/**
 * The process's soft limit of open files (`ulimit -n`; Node raises it to the hard limit at
 * start-up), from /proc/self/limits; null where that file does not exist (not Linux) or says
 * `unlimited`.
 */
export function fdSoftLimit(limitsText?: string): number | null {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return null;
    }
  }
  const m = /^Max open files\s+(\S+)/m.exec(text);
  const n = m ? Number(m[1]) : NaN;
  return Number.isInteger(n) && n > 0 ? n : null;
}

/**
 * Most connections the default global cap allows, whatever the fd limit (containers often have
 * 1,048,576): an idle connection costs the service ~6 KB (10,000 idle keep-alive sockets: RSS
 * +58 MB), so this many are ~100 MB.
 */
export const AUTO_MAX_CONNECTIONS = 16_384;

/**
 * The global cap: MAX_CONNECTIONS when set, else the fd soft limit less a reserve (a fifth of
 * it, at least 256), at most AUTO_MAX_CONNECTIONS: 16,000 at a limit of 20,000, 768 at 1,024.
 * Never above the limit less 256 (a larger MAX_CONNECTIONS is lowered, `clamped` says so).
 * Unknown limit: 1,024 assumed.
 */
export function globalConnectionCap(configured: number | null, fdLimit: number | null): { max: number; fdLimit: number | null; clamped: boolean } {
  const limit = fdLimit ?? 1024;
  const ceiling = Math.max(1, limit - FD_RESERVE_MIN);
  const auto = Math.max(1, Math.min(AUTO_MAX_CONNECTIONS, limit - Math.max(FD_RESERVE_MIN, Math.ceil(limit / 5))));
  if (configured === null) return { max: auto, fdLimit, clamped: false };
  return configured > ceiling ? { max: ceiling, fdLimit, clamped: true } : { max: configured, fdLimit, clamped: false };
}

/** The address a connection counts on: IPv4 as is (an IPv4-mapped IPv6 address as IPv4), IPv6 by its /64. */
export function addressKey(address: string): string {
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}

export interface ConnectionLimits {
  /** Global cap (null: from the fd soft limit, see globalConnectionCap). */
  max: number | null;
  /** Open connections per client address (0: no cap). */
  perAddressMax: number;
}

export interface ConnectionLimitsState {
  /** The global cap in force (server.maxConnections). */
  max: number;
  fdLimit: number | null;
  /** Open connections per address key, as counted now. */
  open(address: string): number;
  /** Connections refused so far: over the per-address cap, over the global cap. */
  refused: { perAddress: number; global: number };
}

/** How often a warning about refused connections may be logged. */
const LOG_INTERVAL_MS = 10_000;

/** Applies both caps to `server` (call before it listens). */
export function limitConnections(server: Server, limits: ConnectionLimits, log: FastifyBaseLogger): ConnectionLimitsState {
  const cap = globalConnectionCap(limits.max, fdSoftLimit());
  if (cap.clamped)
    log.warn({ maxConnections: limits.max, fdSoftLimit: cap.fdLimit, used: cap.max }, 'MAX_CONNECTIONS is above the open-file limit less 256; lowered');
  server.maxConnections = cap.max;
  log.info({ maxConnections: cap.max, fdSoftLimit: cap.fdLimit, maxConnectionsPerAddress: limits.perAddressMax }, 'connection limits');

  const open = new Map<string, number>();
  const refused = { perAddress: 0, global: 0 };
  let logged = { perAddress: 0, global: 0 };
  let lastLog = 0;
  let lastAddress = '';
  const report = () => {
    const now = Date.now();
    if (now - lastLog < LOG_INTERVAL_MS) return;
    lastLog = now;
    log.warn(
      {
        refusedPerAddress: refused.perAddress - logged.perAddress,
        refusedGlobal: refused.global - logged.global,
        lastAddress,
        maxConnectionsPerAddress: limits.perAddressMax,
        maxConnections: cap.max,
      },
      'connections refused over the connection caps',
    );
    logged = { ...refused };
  };

  server.on('drop', (data?: { remoteAddress?: string }) => {
    refused.global++;
    lastAddress = data?.remoteAddress ?? lastAddress;
    report();
  });

  if (limits.perAddressMax > 0) {
    const max = limits.perAddressMax;
    server.on('connection', (socket: Socket) => {
      const address = socket.remoteAddress;
      if (address === undefined) {
        socket.destroy(); // already gone
        return;
      }
      const key = addressKey(address);
      const count = (open.get(key) ?? 0) + 1;
      if (count > max) {
        refused.perAddress++;
        lastAddress = key;
        // A reset: no FIN handshake, no TIME_WAIT on this side, the client learns at once.
        if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
        else socket.destroy();
        report();
        return;
      }
      open.set(key, count);
      socket.once('close', () => {
        const left = (open.get(key) ?? 1) - 1;
        if (left <= 0) open.delete(key);
        else open.set(key, left);
      });
    });
  }

  return { max: cap.max, fdLimit: cap.fdLimit, open: (address) => open.get(addressKey(address)) ?? 0, refused };
}
