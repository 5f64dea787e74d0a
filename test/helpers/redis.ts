/**
 * A real redis-server (Debian's package, installed by scripts/setup-redis.mjs in
 * `npm test`'s pretest) on a free port, in memory only, for the multi-instance
 * tests. Fails with how to install it when it is not there.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { portsOutsideEphemeralRange } from './ports.ts';

export interface RedisServer {
  port: number;
  url: string;
  /** Stops the server (SIGKILL: an outage, not a shutdown). */
  kill(): Promise<void>;
  /** Starts it again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export function redisServerPath(): string {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  if (found.status !== 0 || !path) {
    throw new Error(
      'redis-server is not installed: run `node scripts/setup-redis.mjs` (or `apt-get update && apt-get install -y redis-server`) and rerun the tests',
    );
  }
  return path;
}

async function waitForPort(port: number, up: boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const c = net.connect(port, '127.0.0.1', () => {
        c.destroy();
        resolve(true);
      });
      c.on('error', () => resolve(false));
    });
    if (open === up) return;
    if (Date.now() > until) throw new Error(`redis on port ${port} did not ${up ? 'start' : 'stop'} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startRedis(): Promise<RedisServer> {
  const bin = redisServerPath();
  // Outside the ephemeral range: restart() binds it again after a kill, and other files' port-0 servers and
  // outgoing connections could take an ephemeral one in between (test/helpers/ports.ts).
  const port = (await portsOutsideEphemeralRange(1))[0]!;
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'], { stdio: 'ignore' });
    await waitForPort(port, true);
  };
  const kill = async () => {
    const c = child;
    child = null;
    if (!c || c.exitCode !== null) return;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await gone;
    await waitForPort(port, false);
  };
  await start();
  return { port, url: `redis://127.0.0.1:${port}`, kill, restart: start, stop: kill };
}
