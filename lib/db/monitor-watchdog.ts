/**
 * Un-wedges the driver's server monitor after a connection reset.
 *
 * Why: when every connection to the server is reset at once (a partition that
 * ends in RSTs, a proxy or load balancer dropping its sockets), a failing pool
 * connection asks the monitor for an immediate check. If the monitor's own
 * socket has already been destroyed but its 'close' event has not run yet, the
 * driver (6.x and 7.x alike) writes the heartbeat to the dead socket and waits
 * for a 'drain' that never comes: no error, no socket timeout, and the monitor
 * never checks again. The server stays Unknown and every operation fails server
 * selection until the process restarts (reproduced by test/limits.test.ts,
 * "a database that hangs").
 *
 * The watchdog notices a heartbeat that has not ended within the monitor's own
 * time limit (connectTimeoutMS) plus a margin and, only if the monitor's socket
 * is already destroyed, emits the 'error' that the write would have raised:
 * the heartbeat then fails normally and the monitor reconnects. This reaches one
 * level into the driver's internals (the topology's server monitors), guarded so
 * that a driver without them is simply not watched.
 */
import type { EventEmitter } from 'node:events';
import type { MongoClient, ServerHeartbeatStartedEvent } from 'mongodb';

interface MonitorLike {
  connection?: { socket?: EventEmitter & { destroyed?: boolean } } | null;
}

interface TopologyLike {
  s?: { servers?: Map<string, { monitor?: MonitorLike | null }> };
}

export interface MonitorWatchdog {
  /** Heartbeats un-wedged so far. */
  readonly rescued: number;
  stop(): void;
}

export function watchMonitors(
  client: MongoClient,
  opts: { connectTimeoutMS: number; marginMs?: number; onRescue?: (address: string) => void },
): MonitorWatchdog {
  const limitMs = opts.connectTimeoutMS + (opts.marginMs ?? 2_000);
  const started = new Map<string, number>();
  let rescued = 0;
  const onStart = (e: ServerHeartbeatStartedEvent) => started.set(e.connectionId, Date.now());
  const onEnd = (e: { connectionId: string }) => started.delete(e.connectionId);
  client.on('serverHeartbeatStarted', onStart);
  client.on('serverHeartbeatSucceeded', onEnd);
  client.on('serverHeartbeatFailed', onEnd);

  const timer = setInterval(() => {
    const now = Date.now();
    for (const [address, since] of started) {
      if (now - since < limitMs) continue;
      const topology = (client as unknown as { topology?: TopologyLike }).topology;
      const socket = topology?.s?.servers?.get(address)?.monitor?.connection?.socket;
      if (!socket?.destroyed) continue; // a slow server, not a wedged monitor: its own timeout applies
      started.delete(address);
      rescued += 1;
      opts.onRescue?.(address);
      socket.emit('error', new Error(`monitor heartbeat to ${address} stalled on a closed socket`));
    }
  }, 1_000);
  timer.unref();

  return {
    get rescued() {
      return rescued;
    },
    stop() {
      clearInterval(timer);
      client.off('serverHeartbeatStarted', onStart);
      client.off('serverHeartbeatSucceeded', onEnd);
      client.off('serverHeartbeatFailed', onEnd);
    },
  };
}
