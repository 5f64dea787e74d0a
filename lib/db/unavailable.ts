/**
 * Driver errors that mean "the database is not there right now" (retryable, not a bug): the
 * service answers them 503 `database_unavailable` (lib/http/error-handler.ts) and the job
 * workers log them as an outage, not as a failure of their own (lib/jobs/throttled-errors.ts).
 *
 * The driver does not always say so by the error's class:
 * - a bulk write that lost its connection (the engine stopped or was killed mid-import) is a
 *   MongoBulkWriteError carrying the network error's message and fields, without write errors,
 *   a code or a cause;
 * - a write the server refused because it is shutting down or stepping down carries one of the
 *   codes below, on the error, its write errors or its write-concern error;
 * - a write on a socket the server just closed can surface as Node's own EPIPE, unwrapped.
 */

const UNAVAILABLE_NAMES = new Set([
  'MongoServerSelectionError',
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoNotConnectedError',
  'MongoTopologyClosedError',
  'PoolClearedError',
  'MongoPoolClearedError',
  'MongoPoolClosedError',
  'PoolClosedError',
  'MongoClientClosedError',
]);

/** Server codes of a server that is going away or cannot take the operation now (MongoDB's error_codes.yml). */
const UNAVAILABLE_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  // A read's cursor the server no longer has: the embedded engine was restarted (its cursors died with it) while a
  // report read batch by batch; the read is retryable, not the request's fault.
  43, // CursorNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

/** Node socket errors: the only network the handlers and workers use is the database's. */
const SOCKET_CODES = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Error labels the driver puts on network failures. */
const UNAVAILABLE_LABELS = ['ResetPool', 'NetworkError', 'SystemOverloadedError'];

/** The time limit (`maxTimeMS`) of a query ran out: the request took too long, the database is there. */
export const isOverTime = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === 50; // MaxTimeMSExpired

interface DriverErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  cause?: unknown;
  writeErrors?: unknown;
  writeConcernError?: unknown;
  errorLabels?: unknown;
  hasErrorLabel?: (label: string) => boolean;
  beforeHandshake?: unknown;
  reason?: unknown;
}

const hasLabel = (e: DriverErrorLike): boolean => {
  if (typeof e.hasErrorLabel === 'function') return UNAVAILABLE_LABELS.some((l) => e.hasErrorLabel!(l));
  return Array.isArray(e.errorLabels) && e.errorLabels.some((l) => UNAVAILABLE_LABELS.includes(String(l)));
};

const codeOf = (v: unknown): unknown => (v && typeof v === 'object' ? (v as { code?: unknown }).code : undefined);

/** A bulk write that failed as a whole for a reason that is not the server's answer to a write. */
function isTransportBulkFailure(e: DriverErrorLike): boolean {
  const writeErrors = Array.isArray(e.writeErrors) ? e.writeErrors : [];
  if (writeErrors.length > 0) return writeErrors.every((w) => UNAVAILABLE_CODES.has(codeOf(w) as number));
  if (e.writeConcernError) return UNAVAILABLE_CODES.has(codeOf(e.writeConcernError) as number);
  // The network error's own fields, copied onto the bulk error: beforeHandshake (MongoNetworkError),
  // reason (a topology description: MongoServerSelectionError), or no code at all.
  return 'beforeHandshake' in e || (e.reason !== undefined && typeof e.reason === 'object') || e.code === undefined;
}

/** Whether `err` (or an error it wraps) means the database cannot be reached right now. */
export function isDatabaseUnavailable(err: unknown): boolean {
  let e = err as DriverErrorLike | null | undefined;
  for (let depth = 0; e && typeof e === 'object' && depth < 5; depth++, e = e.cause as DriverErrorLike | undefined) {
    const name = typeof e.name === 'string' ? e.name : '';
    if (UNAVAILABLE_NAMES.has(name)) return true;
    if (name === 'MongoBulkWriteError' && isTransportBulkFailure(e)) return true;
    if (typeof e.code === 'number' && UNAVAILABLE_CODES.has(e.code)) return true;
    if (typeof e.code === 'string' && SOCKET_CODES.has(e.code)) return true;
    if (name === 'MongoWriteConcernError' && UNAVAILABLE_CODES.has(codeOf(e.writeConcernError ?? e) as number)) return true;
    if (hasLabel(e)) return true;
    if (typeof e.message === 'string' && /client was closed|Topology is closed/i.test(e.message)) return true;
  }
  return false;
}
