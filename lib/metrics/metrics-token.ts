/**
 * METRICS_TOKEN (docs/operations.md): `/metrics` then needs `authorization: Bearer <token>`. The
 * check of the service's route (lib/app/metrics.ts) and of `npm run worker`'s (worker-metrics.ts).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../http/api-error.ts';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** The 401 to answer for this `authorization` header, or null when it presents the token. */
export function metricsTokenChecker(token: string): (authorization: unknown) => ApiError | null {
  const expected = digest(token);
  return (header) => {
    const presented = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header)?.[1] : undefined;
    if (presented === undefined)
      return new ApiError(401, 'Unauthorized', ['GET /metrics needs authorization: Bearer <METRICS_TOKEN>'], { reason: 'missing_api_key' });
    // Compared as digests: equal lengths, and no timing clue about the token.
    if (!timingSafeEqual(digest(presented), expected)) return new ApiError(401, 'Unauthorized', ['the bearer token is not the metrics token']);
    return null;
  };
}
