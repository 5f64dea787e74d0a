/**
 * Connection limits (issue 33 §2), through TCP and HTTP against the service as production runs
 * it (scripts/start.ts in a child process, lib/http/connection-limits.ts):
 *
 * - 5,000 keep-alive sockets from 127.0.0.1, one `GET /health` each and then idle: the address
 *   holds at most MAX_CONNECTIONS_PER_ADDRESS (256 by default) of them, the rest are reset at
 *   once; the service's open descriptors stay bounded; meanwhile another client (127.0.0.2, a
 *   new connection per request, with and without an API key) is served, every answer a 200.
 * - Sockets that send nothing, and slowloris sockets (a header byte every 250 ms), are answered
 *   408 and closed at HEADERS_TIMEOUT_MS; those over the per-address cap are reset at once;
 *   another address is served meanwhile. A kept-alive socket idle for KEEP_ALIVE_TIMEOUT_MS is
 *   closed. The global cap (MAX_CONNECTIONS) bounds connections from many addresses.
 *
 * Loopback is 127.0.0.0/8: "another client" connects from 127.0.0.2 (localAddress). Timing
 * assertions are lower bounds (never closed before the limit) and generous upper bounds.
 * The test process holds up to 5,000 sockets at once: it needs an open-file limit above
 * ~6,000 (`ulimit -n`; Node raises its soft limit to the hard one), else the flood is smaller
 * and the test says so.
 */
import t from 'tap';
import net from 'node:net';
import http from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { startEmbeddedMongo } from '../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../lib/db/client.ts';
import { ensureIndexes } from '../lib/service-indexes.ts';
import { storeApiKey } from '../lib/auth/api-keys.ts';
import { fdSoftLimit, addressKey, globalConnectionCap } from '../lib/http/connection-limits.ts';
import { loadConfig } from '../lib/config.ts';
import { startService, type RunningService } from './helpers/service.ts';

t.setTimeout(240_000);

const KEY = 'test_key_connection_limits_0001';
const TENANT = 'TGO850101AB1';
const PER_ADDRESS = 256; // the documented default
const fdLimit = fdSoftLimit() ?? 1024;
const FLOOD = Math.min(5000, fdLimit - 1000);
if (FLOOD < 5000) t.comment(`open-file limit ${fdLimit}: the flood is ${FLOOD} sockets, not 5,000 (raise ulimit -n)`);

const engine = await startEmbeddedMongo({ shortLived: true });
t.teardown(() => engine.stop());
const { client, db } = await connectMongo(engine.uri, 'connlimits');
t.teardown(() => client.close());
await ensureIndexes(db);
await storeApiKey(db, { key: KEY, tenant: TENANT, label: 'connection limits' });

const baseEnv = {
  RATE_LIMIT_MAX: '100000',
  RATE_LIMIT_IP_MAX: '100000',
  REPORT_RATE_LIMIT_MAX: '100000',
  ALERT_WORKER: 'false',
  MONGODB_SERVER_SELECTION_TIMEOUT_MS: '2000',
};

interface Probe {
  socket: net.Socket;
  /** answered: an HTTP answer came; refused: closed (or reset) with none. */
  state: 'pending' | 'answered' | 'refused';
  text: string;
  started: number;
  /** ms from the connect call to the close. */
  closedAfter: number | null;
  /** Answered or closed. */
  done: Promise<void>;
  /** Closed. */
  closed: Promise<void>;
}

/** A socket that sends `first` once connected (then `onConnect` may go on), watched to its end. */
function probe(port: number, first: string, localAddress = '127.0.0.1', onConnect?: (s: net.Socket) => void): Probe {
  const started = performance.now();
  const socket = net.connect({ port, host: '127.0.0.1', localAddress });
  const p: Probe = { socket, state: 'pending', text: '', started, closedAfter: null, done: Promise.resolve(), closed: Promise.resolve() };
  let settle!: () => void;
  let closed!: () => void;
  p.done = new Promise<void>((r) => (settle = r));
  p.closed = new Promise<void>((r) => (closed = r));
  socket.setEncoding('utf8');
  socket.on('connect', () => {
    if (first) socket.write(first);
    onConnect?.(socket);
  });
  socket.on('data', (d: string) => {
    p.text += d;
    if (p.state === 'pending' && p.text.includes('\r\n\r\n')) {
      p.state = 'answered';
      settle();
    }
  });
  socket.on('error', () => {});
  socket.on('close', () => {
    p.closedAfter = performance.now() - started;
    if (p.state === 'pending') p.state = p.text ? 'answered' : 'refused';
    settle();
    closed();
  });
  return p;
}

/** Opens `n` probes, at most `inFlight` not yet answered or closed at a time. */
async function openMany(n: number, make: () => Probe, inFlight = 200): Promise<Probe[]> {
  const all: Probe[] = [];
  const waiting = new Set<Promise<void>>();
  for (let i = 0; i < n; i++) {
    while (waiting.size >= inFlight) await Promise.race(waiting);
    const p = make();
    all.push(p);
    const d = p.done.then(() => void waiting.delete(d));
    waiting.add(d);
  }
  await Promise.all(waiting);
  return all;
}

/** A request on a new connection from `localAddress`; status and time. */
function request(
  port: number,
  path: string,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; ms: number; headers: http.IncomingHttpHeaders }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path, localAddress, headers, agent: false }, (res) => {
      res.resume().on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0, headers: res.headers }));
    });
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.on('error', (err) => resolve({ status: -1, ms: performance.now() - t0, headers: { error: String(err) } }));
    req.end();
  });
}

/**
 * Between two rounds of the other client: a client served while the flood is held, not a second
 * flood (back to back, its requests took a core from the service and the test for the whole file).
 */
const OTHER_CLIENT_PAUSE_MS = 20;

/** Another client, in a loop until stopped: /health and an API call with a key, each on a new connection. */
function otherClient(port: number, localAddress: string) {
  const results: { path: string; status: number; ms: number; error?: string }[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const [path, headers] of [
        ['/health', {}],
        ['/api/financial-docs?limit=1', { 'x-api-key': KEY }],
      ] as const) {
        const r = await request(port, path, localAddress, headers);
        results.push({ path, status: r.status, ms: r.ms, ...(r.status < 0 ? { error: String(r.headers.error) } : {}) });
      }
      await new Promise((r) => setTimeout(r, OTHER_CLIENT_PAUSE_MS));
    }
  })();
  return {
    results,
    async stop() {
      running = false;
      await loop;
      return results;
    },
  };
}

const openFds = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;
const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const pct = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
};
const portOf = (s: RunningService): number => Number(new URL(s.base).port);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('settings: defaults, validation, the global cap below the open-file limit', async (t) => {
  const c = loadConfig({});
  t.same(c.connections, { max: null, perAddressMax: 256, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 72_000 }, 'defaults');
  t.equal(loadConfig({ TRUST_PROXY: 'true' }).connections.perAddressMax, 0, 'behind a proxy: no per-address cap unless set');
  t.equal(loadConfig({ TRUST_PROXY: 'true', MAX_CONNECTIONS_PER_ADDRESS: '50' }).connections.perAddressMax, 50);
  t.equal(loadConfig({ REQUEST_TIMEOUT_MS: '3000' }).connections.headersTimeoutMs, 3000, 'headers never allowed longer than the request');
  t.throws(() => loadConfig({ MAX_CONNECTIONS: '-1' }), /MAX_CONNECTIONS must be an integer/);
  t.throws(() => loadConfig({ HEADERS_TIMEOUT_MS: '10' }), /HEADERS_TIMEOUT_MS must be an integer/);
  t.throws(() => loadConfig({ KEEP_ALIVE_TIMEOUT_MS: 'soon' }), /KEEP_ALIVE_TIMEOUT_MS must be an integer/);
  t.same(globalConnectionCap(null, 20_000), { max: 16_000, fdLimit: 20_000, clamped: false }, 'default: a fifth of the limit kept back');
  t.same(globalConnectionCap(null, 1024), { max: 768, fdLimit: 1024, clamped: false }, 'at least 256 kept back');
  t.same(globalConnectionCap(null, 1_048_576), { max: 16_384, fdLimit: 1_048_576, clamped: false }, 'at most 16,384 by default (memory)');
  t.same(globalConnectionCap(null, null), { max: 768, fdLimit: null, clamped: false }, 'unknown limit: 1,024 assumed');
  t.same(globalConnectionCap(50_000, 20_000), { max: 19_744, fdLimit: 20_000, clamped: true }, 'MAX_CONNECTIONS above the limit less 256 is lowered');
  t.same(globalConnectionCap(300, 20_000), { max: 300, fdLimit: 20_000, clamped: false });
  t.equal(fdSoftLimit('Limit  Soft Limit  Hard Limit  Units\nMax open files            4096                 524288               files     \n'), 4096);
  t.equal(addressKey('::ffff:10.1.2.3'), '10.1.2.3');
  t.equal(addressKey('2001:db8:1:2:aaaa::1'), addressKey('2001:db8:1:2:bbbb:cccc:dddd:eeee'), 'IPv6 counted per /64');
  t.not(addressKey('2001:db8:1:2::1'), addressKey('2001:db8:1:3::1'));
});

t.test(`${FLOOD} idle keep-alive sockets from one address while another client is served`, async (t) => {
  // Held sockets stay held for the whole flood (the keep-alive timeout is tested below).
  const service = await startService({ mongodbUri: engine.uri, mongodbDb: 'connlimits', env: { ...baseEnv, KEEP_ALIVE_TIMEOUT_MS: '120000' } });
  t.teardown(() => service.stop());
  const port = portOf(service);
  const pid = service.child.pid!;
  const fdsBefore = openFds(pid);
  const rssBefore = rssMb(pid);
  let fdsMax = fdsBefore;
  const sampler = setInterval(() => (fdsMax = Math.max(fdsMax, openFds(pid))), 50);

  const other = otherClient(port, '127.0.0.2');
  const t0 = performance.now();
  const flood = await openMany(FLOOD, () => probe(port, 'GET /health HTTP/1.1\r\nhost: x\r\n\r\n'));
  const floodMs = performance.now() - t0;
  const fdsHeld = openFds(pid);
  const rssHeld = rssMb(pid);
  // The other client goes on a little while the address holds its sockets.
  await sleep(1000);
  clearInterval(sampler);
  const served = await other.stop();

  const answered = flood.filter((p) => p.state === 'answered');
  const refused = flood.filter((p) => p.state === 'refused');
  t.equal(answered.length + refused.length, FLOOD, 'every socket answered or refused');
  t.ok(answered.length <= PER_ADDRESS, `one address held at most ${PER_ADDRESS} connections (${answered.length})`);
  t.ok(answered.length >= PER_ADDRESS - 10, `and it did get about its ${PER_ADDRESS} (${answered.length})`);
  t.ok(
    answered.every((p) => p.text.startsWith('HTTP/1.1 200')),
    'the held ones were answered 200',
  );
  t.ok(
    answered.every((p) => !p.socket.destroyed),
    'and are still open (idle keep-alive)',
  );
  t.equal(refused.length, FLOOD - answered.length, `${refused.length} refused`);
  const refuseMs = refused.map((p) => p.closedAfter!);
  t.ok(fdsMax < fdsBefore + PER_ADDRESS + 200, `service descriptors bounded: ${fdsBefore} before, ${fdsMax} at most during the flood, ${fdsHeld} while held`);

  t.ok(served.length >= 4, `the other client made ${served.length} requests meanwhile`);
  const bad = served.filter((r) => r.status !== 200);
  t.same(bad, [], 'every request of the other client (127.0.0.2, new connections) answered 200');
  const ms = served.map((r) => r.ms);
  t.comment(
    `figures: ${FLOOD} sockets in ${Math.round(floodMs)} ms; held ${answered.length}, refused ${refused.length} ` +
      `(closed ${pct(refuseMs, 0.5).toFixed(1)} ms p50 / ${pct(refuseMs, 0.99).toFixed(1)} ms p99 after the connect call); ` +
      `service fds ${fdsBefore} → max ${fdsMax}, RSS ${rssBefore.toFixed(0)} → ${rssHeld.toFixed(0)} MB; ` +
      `other client ${served.length} requests, p50 ${pct(ms, 0.5).toFixed(1)} ms, max ${Math.max(...ms).toFixed(1)} ms`,
  );

  // The flood's address is served again once it lets go of its sockets.
  for (const p of answered) p.socket.destroy();
  let again = await request(port, '/health', '127.0.0.1');
  for (const until = Date.now() + 10_000; again.status !== 200 && Date.now() < until;) {
    await sleep(100);
    again = await request(port, '/health', '127.0.0.1');
  }
  t.equal(again.status, 200, 'the address is served again once its sockets are closed');
  const log = service.output();
  t.match(log, /connections refused over the connection caps/, 'the refusals are logged (one line per interval, not per socket)');
  // At most one line per 10 s interval while the flood lasts (60 s at a load average of 17: 7 lines), not 4,744.
  const lines = (log.match(/connections refused over the connection caps/g) ?? []).length;
  t.ok(lines <= 2 + Math.floor(floodMs / 10_000), `not once per socket (${lines} lines over a ${Math.round(floodMs)} ms flood)`);
});

t.test(
  'sockets that send nothing or dribble their headers are closed at HEADERS_TIMEOUT_MS; kept-alive idle ones at KEEP_ALIVE_TIMEOUT_MS; global cap',
  async (t) => {
    const HEADERS_MS = 2000;
    const KEEP_ALIVE_MS = 2000;
    const PER = 100;
    const GLOBAL = 250;
    const service = await startService({
      mongodbUri: engine.uri,
      mongodbDb: 'connlimits',
      env: {
        ...baseEnv,
        HEADERS_TIMEOUT_MS: String(HEADERS_MS),
        KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
        MAX_CONNECTIONS_PER_ADDRESS: String(PER),
        MAX_CONNECTIONS: String(GLOBAL),
      },
    });
    t.teardown(() => service.stop());
    const port = portOf(service);
    // Slack for a loaded machine: Node checks header deadlines every second, the client's timers may run late.
    const LATE = 6000;

    await t.test('silent sockets: 408 and closed at the headers timeout; the excess reset at once', async (t) => {
      const other = otherClient(port, '127.0.0.2');
      const probes: Probe[] = [];
      for (let i = 0; i < PER + 50; i++) probes.push(probe(port, ''));
      await Promise.all(probes.map((p) => p.closed));
      const served = await other.stop();
      const timedOut = probes.filter((p) => p.state === 'answered');
      const reset = probes.filter((p) => p.state === 'refused');
      t.ok(timedOut.length <= PER && timedOut.length >= PER - 5, `${timedOut.length} held (cap ${PER})`);
      t.equal(reset.length, PER + 50 - timedOut.length, `${reset.length} reset`);
      t.ok(
        timedOut.every((p) => /^HTTP\/1\.1 408 /.test(p.text)),
        'the held ones answered 408',
      );
      const closed = timedOut.map((p) => p.closedAfter!);
      t.ok(Math.min(...closed) >= HEADERS_MS - 50, `never before the timeout (first at ${Math.min(...closed).toFixed(0)} ms)`);
      t.ok(Math.max(...closed) < HEADERS_MS + LATE, `all by ${Math.max(...closed).toFixed(0)} ms (timeout ${HEADERS_MS} ms)`);
      t.ok(Math.max(...reset.map((p) => p.closedAfter!)) < HEADERS_MS, 'the excess was refused before any timeout');
      t.same(
        served.filter((r) => r.status !== 200),
        [],
        `another address served meanwhile (${served.length} requests, max ${Math.max(...served.map((r) => r.ms)).toFixed(0)} ms)`,
      );
    });

    await t.test('slowloris: a header byte every 250 ms, closed at the headers timeout', async (t) => {
      const header = `GET /api/financial-docs HTTP/1.1\r\nhost: x\r\nx-api-key: ${KEY}\r\nx-padding: ${'a'.repeat(200)}\r\n\r\n`;
      const timers: NodeJS.Timeout[] = [];
      t.teardown(() => timers.forEach(clearInterval));
      const dribble = (s: net.Socket) => {
        let i = 0;
        const timer = setInterval(() => {
          if (s.destroyed || i >= header.length) return clearInterval(timer);
          s.write(header[i++]!);
        }, 250);
        timers.push(timer);
      };
      const other = otherClient(port, '127.0.0.2');
      const probes: Probe[] = [];
      for (let i = 0; i < PER + 50; i++) probes.push(probe(port, '', '127.0.0.1', dribble));
      await Promise.all(probes.map((p) => p.closed));
      const served = await other.stop();
      const held = probes.filter((p) => p.state === 'answered');
      const reset = probes.filter((p) => p.state === 'refused');
      t.ok(held.length <= PER && held.length >= PER - 5, `${held.length} held (cap ${PER}), ${reset.length} reset`);
      t.ok(
        held.every((p) => /^HTTP\/1\.1 408 /.test(p.text)),
        'the held ones answered 408 (not served: their headers never completed)',
      );
      const closed = held.map((p) => p.closedAfter!);
      t.ok(Math.min(...closed) >= HEADERS_MS - 50, `never before the timeout (first at ${Math.min(...closed).toFixed(0)} ms)`);
      t.ok(Math.max(...closed) < HEADERS_MS + LATE, `all by ${Math.max(...closed).toFixed(0)} ms though they kept sending`);
      t.same(
        served.filter((r) => r.status !== 200),
        [],
        `another address served meanwhile (${served.length} requests, max ${Math.max(...served.map((r) => r.ms)).toFixed(0)} ms)`,
      );
    });

    await t.test('a kept-alive connection idle for KEEP_ALIVE_TIMEOUT_MS is closed', async (t) => {
      const p = probe(port, 'GET /health HTTP/1.1\r\nhost: x\r\n\r\n');
      await p.done;
      t.match(p.text, /^HTTP\/1\.1 200 /, 'answered');
      t.match(p.text, /keep-alive: timeout=2/i, 'the answer tells the client how long the connection stays');
      const answeredAt = performance.now() - p.started;
      await p.closed;
      const idle = p.closedAfter! - answeredAt;
      t.ok(idle >= KEEP_ALIVE_MS - 50 && idle < KEEP_ALIVE_MS + LATE, `closed by the service after ${idle.toFixed(0)} ms idle`);
    });

    await t.test('the global cap bounds connections from many addresses', async (t) => {
      const probes: Probe[] = [];
      for (const host of ['127.0.0.3', '127.0.0.4', '127.0.0.5']) for (let i = 0; i < PER; i++) probes.push(probe(port, '', host));
      await Promise.all(probes.map((p) => p.closed));
      const held = probes.filter((p) => p.state === 'answered');
      t.ok(held.length <= GLOBAL && held.length >= GLOBAL - 10, `${held.length} held of ${probes.length} (global cap ${GLOBAL})`);
      t.ok(
        held.every((p) => /^HTTP\/1\.1 408 /.test(p.text)),
        'then closed at the headers timeout',
      );
      const after = await request(port, '/health', '127.0.0.6');
      t.equal(after.status, 200, 'served again once they are closed');
    });
  },
);
