import type { Json } from '../lib/spec/deref.ts';

/**
 * What the spec says about a route beyond its contract, as `x-` extensions of the operation
 * (beside `x-no-fastify-config` and `x-rate-limit-budget`); glue, Schemathesis and the client
 * generators ignore them:
 * - `x-request-deadline`: `imports` (IMPORT_TIMEOUT_MS: whole archives, a month of tickets) or
 *   `none` (a liveness probe does no I/O); absent: REQUEST_TIMEOUT_MS;
 * - `x-body-limit`: `imports` (IMPORT_MAX_TOTAL_BYTES) or `deliveries` (DELIVERIES_BODY_LIMIT_BYTES);
 *   absent: BODY_LIMIT_BYTES;
 * - `x-rate-limit: false`: never rate limited (probes must not depend on the store);
 * - `x-compress: false`: neither compressed nor decompressed;
 * - `x-tenant-data: true`: an operation without an API key that still answers a tenant's data (a
 *   signed link's file): never stored by caches (`cache-control: no-store`, as secured operations).
 * A value not listed here stops the start-up: a typo must not silently drop a policy.
 */
export interface RoutePolicy {
  deadline: 'default' | 'imports' | 'none';
  bodyLimit: 'default' | 'imports' | 'deliveries';
  rateLimited: boolean;
  compressed: boolean;
  tenantData: boolean;
}

function oneOf<T extends string>(operationId: string, name: string, value: Json | undefined, allowed: readonly T[], absent: T): T {
  if (value === undefined) return absent;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new Error(`${operationId}: ${name} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
}

function flag(operationId: string, name: string, value: Json | undefined, absent = true): boolean {
  if (value === undefined) return absent;
  if (typeof value === 'boolean') return value;
  throw new Error(`${operationId}: ${name} must be true or false (got ${JSON.stringify(value)})`);
}

export function routePolicy(operationId: string, extensions: Readonly<Record<string, Json>>): RoutePolicy {
  return {
    deadline: oneOf(operationId, 'x-request-deadline', extensions['x-request-deadline'], ['imports', 'none'], 'default'),
    bodyLimit: oneOf(operationId, 'x-body-limit', extensions['x-body-limit'], ['imports', 'deliveries'], 'default'),
    rateLimited: flag(operationId, 'x-rate-limit', extensions['x-rate-limit']),
    compressed: flag(operationId, 'x-compress', extensions['x-compress']),
    tenantData: flag(operationId, 'x-tenant-data', extensions['x-tenant-data'], false),
  };
}
