/** GET /ready: ready when the database answers a ping within the readiness budget; 503 (documented error shape) when it does not. */
import { ApiError } from '../http/api-error.ts';

export interface Readiness {
  status: 'ready';
  database: 'up';
  latencyMs: number;
}

export interface ReadinessInput {
  pingDatabase: () => Promise<number>;
  /** READY_TIMEOUT_MS: the answer comes within this, whatever the database does. */
  readyTimeoutMs: number;
  /** A reason the database is known to be down (no ping needed), or null. */
  databaseProblem: () => string | null;
}

export async function getReady({ pingDatabase, readyTimeoutMs, databaseProblem }: ReadinessInput): Promise<Readiness> {
  const known = databaseProblem();
  if (known) throw new ApiError(503, 'Service Unavailable', [`database unavailable: ${known}`]);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), readyTimeoutMs);
  });
  try {
    const outcome = await Promise.race([pingDatabase(), timeout]);
    if (outcome === 'timeout') throw new ApiError(503, 'Service Unavailable', [`database unavailable: no answer to a ping within ${readyTimeoutMs} ms`]);
    return { status: 'ready', database: 'up', latencyMs: outcome };
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw new ApiError(503, 'Service Unavailable', ['database unavailable']);
  } finally {
    clearTimeout(timer);
  }
}
