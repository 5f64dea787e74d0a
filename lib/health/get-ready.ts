/** GET /api/ready: ready when the database answers a ping; 503 (documented error shape) when it does not. */
import { ApiError } from '../http/api-error.ts';

export interface Readiness {
  status: 'ready';
  database: 'up';
  latencyMs: number;
}

export async function getReady(pingDatabase: () => Promise<number>): Promise<Readiness> {
  try {
    const latencyMs = await pingDatabase();
    return { status: 'ready', database: 'up', latencyMs };
  } catch {
    throw new ApiError(503, 'Service Unavailable', ['database unavailable']);
  }
}
