/**
 * What an error answer must look like beyond `{code, message, details}` (issue 11, item 5):
 * a `reason` from the closed enum that fits the status, and for validation reasons
 * `fields` parallel to `details`. Written independently of lib/http/api-error.ts so that
 * a wrong mapping there is caught here.
 */

/** The statuses each reason may come with. */
export const REASON_STATUSES: Record<string, number[]> = {
  invalid_parameter: [400],
  invalid_body: [400],
  invalid_cursor: [400, 404], // 400 out of the documented form, 404 in it but not issued for the walk
  invalid_request: [400],
  missing_api_key: [401],
  unknown_api_key: [401],
  insufficient_scope: [403],
  foreign_tenant: [403],
  not_found: [404],
  method_not_allowed: [405],
  request_timeout: [408],
  conflict: [409],
  payload_too_large: [413],
  unsupported_media_type: [415],
  rate_limited: [429],
  too_many_sessions: [429],
  headers_too_large: [431],
  internal_error: [500],
  database_unavailable: [503],
  deadline_exceeded: [503],
  not_configured: [503],
  shutting_down: [503],
  quota_exceeded: [409, 429], // 409 for what the tenant holds (jobs, endpoints), 429 for what frees up by itself (queued test deliveries)
  idempotency_key_reused: [409],
};

/** Reasons that say which parameter or body field is wrong: `fields` is required with them. */
export const VALIDATION_REASONS = new Set(['invalid_parameter', 'invalid_body', 'invalid_cursor']);

export interface ErrorField {
  in: string;
  name: string;
  detail: string;
}
export interface ErrorPayload {
  code: number;
  message: string;
  details: string[];
  reason: string;
  fields?: ErrorField[];
}

/** A problem with an error answer's body, or null when it is in the documented shape. */
export function errorProblem(status: number, parsed: unknown): string | null {
  const e = (parsed as { error?: Partial<ErrorPayload> } | null)?.error;
  if (!e || e.code !== status || typeof e.message !== 'string' || !Array.isArray(e.details)) return `${status} not in the error shape`;
  if (typeof e.reason !== 'string') return `${status} without a reason`;
  const statuses = REASON_STATUSES[e.reason];
  if (!statuses) return `${status}: reason ${e.reason} is not in the enum`;
  if (!statuses.includes(status)) return `${status} with reason ${e.reason} (which goes with ${statuses.join('/')})`;
  if (VALIDATION_REASONS.has(e.reason) && !e.fields) return `${status} ${e.reason} without fields`;
  if (e.fields) {
    if (!VALIDATION_REASONS.has(e.reason)) return `fields on a ${e.reason} error`;
    if (e.fields.length !== e.details.length || e.fields.some((f, i) => f.detail !== e.details![i])) return 'fields do not follow details';
    if (e.fields.some((f) => !['query', 'path', 'header', 'body'].includes(f.in) || typeof f.name !== 'string')) return 'a field without in/name';
    const names = e.fields.map((f) => `${f.in} ${f.name}`);
    if (new Set(names).size !== names.length) return `two details about one field: ${names.join(', ')}`;
  }
  return null;
}
