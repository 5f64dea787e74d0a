/** GET /health: liveness only; it never touches the database. */
import { ApiError } from '../http/api-error.ts';

export interface HealthInput {
  startedAt: number;
  version: string;
  /** Why this process should be restarted, or null while it is fine. */
  livenessProblem: () => string | null;
}

export interface Health {
  status: 'ok';
  uptimeSeconds: number;
  version: string;
}

export function getHealth({ startedAt, version, livenessProblem }: HealthInput, nowMs: number = Date.now()): Health {
  const problem = livenessProblem();
  // Not database_unavailable: this instance is broken for good and is about to exit.
  if (problem) throw new ApiError(503, 'Service Unavailable', [`${problem}; this instance is exiting to be restarted`], { reason: 'shutting_down' });
  return { status: 'ok', uptimeSeconds: Math.round((nowMs - startedAt) / 100) / 10, version };
}
