import type { FastifyReply } from 'fastify';
import { ApiError } from '../lib/http/api-error.ts';

/**
 * Runs a long write (an import of files, a month of delivery tickets) that stops
 * between batches when its deadline has answered 503 or the client left (the
 * reply's socket closes), or when the service starts closing (Ctrl-C, SIGTERM):
 * then it answers 503 `shutting_down` itself. What finished before the stop is
 * stored whole; sending the same input again completes it.
 */
export async function runUntilStopped<T>(
  reply: FastifyReply,
  shutdown: AbortSignal,
  isAborted: (err: unknown) => boolean,
  whatToResend: string,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T | FastifyReply> {
  const stop = new AbortController();
  const onStop = () => stop.abort();
  reply.raw.once('close', onStop);
  shutdown.addEventListener('abort', onStop, { once: true });
  try {
    return await run(stop.signal);
  } catch (err) {
    if (!isAborted(err)) throw err;
    if (shutdown.aborted && !reply.sent && !reply.raw.destroyed) {
      reply.header('retry-after', '5');
      throw new ApiError(
        503,
        'Service Unavailable',
        [`the service is shutting down: what was done so far is stored whole; send ${whatToResend} again to complete it`],
        { reason: 'shutting_down' },
      );
    }
    // The 503 is already sent (or nobody is listening any more).
    if (!reply.sent) reply.raw.destroy();
    return reply;
  } finally {
    shutdown.removeEventListener('abort', onStop);
    reply.raw.off('close', onStop);
  }
}
