/**
 * Ports for a server that a test starts again on the same port (an engine stopped, or killed and
 * restarted by its supervisor), or whose port it probes once closed, while other test files run
 * beside it (tap's jobs). Those bind port 0, and each of their outgoing connections takes a local
 * port: the kernel hands both out only from its ephemeral range (net.ipv4.ip_local_port_range),
 * so a port outside it cannot be taken by them between a stop and the restart. Nothing in the
 * suite binds a fixed port; one taken anyway (another program on the machine) is skipped.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** The kernel's ephemeral port range, [low, high] (Linux). */
export function ephemeralPortRange(): [number, number] {
  const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  if (!Number.isInteger(low) || !Number.isInteger(high)) throw new Error('cannot read /proc/sys/net/ipv4/ip_local_port_range');
  return [low!, high!];
}

/** Ports to pick from: the wider of the spans below the ephemeral range (from 10000, clear of the usual services) and above it. */
function outsideSpan(): [number, number] {
  const [low, high] = ephemeralPortRange();
  const below: [number, number] = [10_000, low - 1];
  const above: [number, number] = [high + 1, 65_535];
  const span = below[1] - below[0] >= above[1] - above[0] ? below : above;
  if (span[1] - span[0] < 1000) throw new Error(`the ephemeral port range ${low}–${high} leaves no span of 1,000 ports outside it (10000–65535)`);
  return span;
}

/** Whether `port` can be listened on at 127.0.0.1 now. */
function free(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen({ port, host: '127.0.0.1', exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** `n` distinct ports outside the ephemeral range, free when looked at. */
export async function portsOutsideEphemeralRange(n: number): Promise<number[]> {
  const [from, to] = outsideSpan();
  const ports: number[] = [];
  for (let tries = 0; ports.length < n; tries++) {
    if (tries > 200) throw new Error(`no ${n} free ports found in ${from}–${to} (200 tried)`);
    const port = from + Math.floor(Math.random() * (to - from + 1));
    if (!ports.includes(port) && (await free(port))) ports.push(port);
  }
  return ports;
}

/** Whether a start failed because its port was taken (Node's EADDRINUSE, the engine's BindException). */
export const portTaken = (err: unknown): boolean => /EADDRINUSE|address already in use|BindException|cannot bind/i.test(String((err as Error)?.message ?? err));

/**
 * `start` on `n` ports outside the ephemeral range; on other ones when it failed because one was
 * taken between the look and the bind (another program), up to 5 times.
 */
export async function onPortsOutsideEphemeralRange<T>(n: number, start: (ports: number[]) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const ports = await portsOutsideEphemeralRange(n);
    try {
      return await start(ports);
    } catch (err) {
      if (attempt >= 5 || !portTaken(err)) throw err;
    }
  }
}
