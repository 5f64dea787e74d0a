import type { Json } from './deref.ts';
import { listOperations } from './operations.ts';

/**
 * Names a routed request for metrics and traces: the spec's operationId for its method and route
 * pattern, else the route pattern itself (routes outside the spec: /metrics, /docs); never the
 * URL, whose ids and query are the client's.
 */
export function operationByRoute(spec: Json): (method: string, routeUrl: string | undefined) => string {
  const byRoute = new Map(listOperations(spec).map((op) => [`${op.method} ${op.route}`, op.operationId]));
  return (method, routeUrl) => byRoute.get(`${method} ${routeUrl ?? ''}`) ?? routeUrl ?? '';
}
