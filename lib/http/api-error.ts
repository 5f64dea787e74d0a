/**
 * Stable, machine-readable causes of an error answer (`error.reason`): messages and
 * details are for people and may change, reasons do not (spec: ErrorReason).
 */
import { addTo } from '../shared/add-to.ts';
export const ERROR_REASONS = [
  'invalid_parameter',
  'invalid_body',
  'invalid_cursor',
  'invalid_request',
  'missing_api_key',
  'unknown_api_key',
  'insufficient_scope',
  'foreign_tenant',
  'not_found',
  'method_not_allowed',
  'request_timeout',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'too_many_sessions',
  'headers_too_large',
  'internal_error',
  'database_unavailable',
  'deadline_exceeded',
  'not_configured',
  'shutting_down',
  'quota_exceeded',
  'idempotency_key_reused',
] as const;
export type ErrorReason = (typeof ERROR_REASONS)[number];

/** The reason of an answer whose code says it all (a more precise one is passed where known). */
const REASON_BY_STATUS: Record<number, ErrorReason> = {
  400: 'invalid_request',
  401: 'unknown_api_key',
  403: 'insufficient_scope',
  404: 'not_found',
  405: 'method_not_allowed',
  408: 'request_timeout',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'rate_limited',
  431: 'headers_too_large',
  500: 'internal_error',
  503: 'database_unavailable',
};
export const reasonFor = (status: number): ErrorReason => REASON_BY_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'invalid_request');

/** Where a validation problem is: the parameter or body field as the client wrote it. */
export interface ErrorField {
  in: 'query' | 'path' | 'header' | 'body';
  /** Parameter name, or the body field's dotted path (empty for the body as a whole). */
  name: string;
  /** The detail (also in `details`) about this field. */
  detail: string;
}

export interface ErrorExtras {
  reason?: ErrorReason;
  fields?: ErrorField[];
  /** Sent as `retry-after` (429, 503). */
  retryAfterSeconds?: number;
}

/** An error with an HTTP status and the details the client is shown. */
export class ApiError extends Error {
  readonly statusCode: number;
  readonly details: string[];
  readonly reason: ErrorReason;
  readonly fields: ErrorField[] | undefined;
  readonly retryAfterSeconds: number | undefined;
  constructor(statusCode: number, message: string, details: string[] = [], extras: ErrorExtras = {}) {
    super(message);
    this.statusCode = statusCode;
    this.details = details;
    this.reason = extras.reason ?? reasonFor(statusCode);
    this.fields = extras.fields;
    this.retryAfterSeconds = extras.retryAfterSeconds;
  }
}

export const badRequest = (message: string, details: string[], extras: ErrorExtras = {}) => new ApiError(400, message, details, extras);
/** 400 about one query parameter (the detail names it). */
export const invalidQuery = (name: string, detail: string) =>
  badRequest('Invalid query parameter', [detail], {
    reason: name === 'cursor' ? 'invalid_cursor' : 'invalid_parameter',
    fields: [{ in: 'query', name, detail }],
  });

/**
 * 400 about body fields; each problem starts with the field it is about (`url: …`, `userIds must …`).
 * One detail per field, as for schema validation: several problems of one field are joined.
 */
export function invalidBody(problems: string[]): ApiError {
  const byField = new Map<string, string[]>();
  for (const problem of problems) {
    const name = /^[\w.[\]]+/.exec(problem)?.[0] ?? '';
    addTo(byField, name, problem);
  }
  // A few are enough to act on (1,000 bad user ids would be 1,000 problems).
  const joined = (list: string[]) => list.slice(0, 3).join('; ') + (list.length > 3 ? `; and ${list.length - 3} more` : '');
  const fields = [...byField].map(([name, list]) => ({ in: 'body' as const, name, detail: joined(list) }));
  return badRequest(
    'Invalid request body',
    fields.map((f) => f.detail),
    { reason: 'invalid_body', fields },
  );
}

export const notFound = (detail: string) => new ApiError(404, 'Not Found', [detail]);
/** 409 (or 429 when it frees up by itself) for a request over one of the tenant's quotas. */
export const quotaExceeded = (status: 409 | 429, detail: string, retryAfterSeconds?: number) =>
  new ApiError(status, status === 409 ? 'Conflict' : 'Too Many Requests', [detail], { reason: 'quota_exceeded', retryAfterSeconds });
/** 403 for a request that names another tenant than the key's. */
export const foreignTenant = (detail: string) => new ApiError(403, 'Forbidden', [detail], { reason: 'foreign_tenant' });

export interface ErrorBody {
  error: { code: number; message: string; details: string[]; reason: ErrorReason; fields?: ErrorField[] };
}

export const errorBody = (code: number, message: string, details: string[], extras: ErrorExtras = {}): ErrorBody => ({
  error: { code, message, details, reason: extras.reason ?? reasonFor(code), ...(extras.fields ? { fields: extras.fields } : {}) },
});

/** The body of an ApiError. */
export const apiErrorBody = (err: ApiError): ErrorBody =>
  errorBody(err.statusCode, err.message, err.details, { reason: err.reason, ...(err.fields ? { fields: err.fields } : {}) });
