/**
 * A job worker's 'error' events, logged without flooding: Agenda reports a failed poll on
 * every poll (every 2 to 5 s) for as long as the database is down. The first error of a kind
 * is logged at once; the same kind again within `intervalMs` (one minute by default) is only
 * counted, and the next line of that kind says how many were left out (`suppressed`).
 *
 * "Database unavailable" (lib/db/unavailable.ts) is one kind, logged as a warning: an outage
 * of the database is not a failure of the worker, which keeps polling and resumes by itself.
 * Other errors are kinds by their message, logged as errors.
 */
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import type { JobLogger } from './job-logger.ts';

export const DEFAULT_ERROR_LOG_INTERVAL_MS = 60_000;
const MAX_KINDS = 100;

export function throttledErrorLog(log: JobLogger, label: string, opts: { intervalMs?: number; now?: () => number } = {}): (err: Error) => void {
  const intervalMs = opts.intervalMs ?? DEFAULT_ERROR_LOG_INTERVAL_MS;
  const now = opts.now ?? Date.now;
  const kinds = new Map<string, { loggedAt: number; suppressed: number }>();
  return (err: Error) => {
    const outage = isDatabaseUnavailable(err);
    const kind = outage ? 'database unavailable' : err.message;
    const t = now();
    const seen = kinds.get(kind);
    if (seen && t - seen.loggedAt < intervalMs) {
      seen.suppressed += 1;
      return;
    }
    const fields = { err: { name: err.name, message: err.message }, ...(seen?.suppressed ? { suppressed: seen.suppressed } : {}) };
    if (outage) log.warn(fields, `${label}: database unavailable, polling goes on (logged at most once a minute)`);
    else log.error(fields, `${label} error`);
    kinds.delete(kind);
    kinds.set(kind, { loggedAt: t, suppressed: 0 });
    if (kinds.size > MAX_KINDS) kinds.delete(kinds.keys().next().value!);
  };
}
