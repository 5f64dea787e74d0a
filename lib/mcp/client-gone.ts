/**
 * Whether the client of a request left before its answer was complete: its
 * connection closed, or ended from its side (an HTTP/1.1 client does not end
 * its side while awaiting an answer; Node's server treats it as leaving), before
 * the response finished. Watched from the route handler on, before the
 * connection is handed to the SDK: a transport attaches its own `close`
 * listener only when it starts, and a connection that closed before that never
 * tells it (a session nobody can reach would hold a place under the caps until
 * it expires).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';

export interface ClientWatch {
  /** The client left before the response was complete (so far). */
  readonly gone: boolean;
  /** Called once, when the client leaves after this call (not when it had already left). */
  onGone(listener: () => void): void;
}

export function watchClient(req: IncomingMessage, res: ServerResponse): ClientWatch {
  const socket = req.socket;
  // Closed or ended already (during authentication, say): nothing of the response was written yet.
  let gone = res.destroyed || socket.destroyed || socket.readableEnded;
  let finished = false;
  let listener: (() => void) | undefined;
  const leave = () => {
    socket.off('end', leave);
    // A response closes after it finished too: only leaving before that counts.
    if (finished || gone) return;
    gone = true;
    listener?.();
  };
  if (!gone) {
    // `finish`, not `writableFinished`: a response ended on a dead connection counts as finished without ever finishing.
    res.once('finish', () => {
      finished = true;
      socket.off('end', leave);
    });
    res.once('close', leave);
    socket.once('end', leave);
  }
  return {
    get gone() {
      return gone;
    },
    onGone(l) {
      listener = l;
    },
  };
}

/**
 * Resolves after the event loop has polled for I/O once more: a connection's end already received
 * (a client that wrote its request and closed at once) is read then, not in the turn that read the
 * request, and a request answered without waiting on anything (its key cached) would otherwise be
 * answered, and its session made, before its client's leaving is seen. Awaited before a session is made.
 */
export const eventsSoFar = (): Promise<void> => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

/** What a route answers a client that left before anything was made for it: nothing (its connection is closing). */
export function abandon(reply: FastifyReply): FastifyReply {
  reply.hijack();
  reply.raw.destroy();
  return reply;
}
