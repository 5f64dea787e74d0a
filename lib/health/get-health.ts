/** GET /api/health: liveness only; it never touches the database. */
export interface HealthInput {
  startedAt: number;
  version: string;
}

export interface Health {
  status: 'ok';
  uptimeSeconds: number;
  version: string;
}

export function getHealth({ startedAt, version }: HealthInput, nowMs: number = Date.now()): Health {
  return { status: 'ok', uptimeSeconds: Math.round((nowMs - startedAt) / 100) / 10, version };
}
