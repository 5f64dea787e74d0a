import type { HandlerDeps, HandlerMap } from './types.ts';
import { ApiError } from '../lib/http/api-error.ts';

export function healthHandlers(deps: HandlerDeps): Pick<HandlerMap, 'getHealth' | 'getReady'> {
  return {
    async getHealth() {
      return { status: 'ok', uptimeSeconds: Math.round((Date.now() - deps.startedAt) / 100) / 10, version: deps.version };
    },
    async getReady() {
      try {
        const latencyMs = await deps.pingDatabase();
        return { status: 'ready', database: 'up', latencyMs };
      } catch {
        throw new ApiError(503, 'Service Unavailable', ['database unavailable']);
      }
    },
  };
}
