import type { HandlerDeps, HandlerMap } from './types.ts';
import { getHealth } from '../lib/health/get-health.ts';
import { getReady } from '../lib/health/get-ready.ts';

export function healthHandlers(deps: HandlerDeps): Pick<HandlerMap, 'getHealth' | 'getReady'> {
  return {
    async getHealth() {
      return getHealth(deps);
    },
    async getReady() {
      return getReady(deps);
    },
  };
}
