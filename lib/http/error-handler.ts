import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, apiErrorBody, errorBody, reasonFor } from './api-error.ts';
import { validationProblems } from './validation-details.ts';
import { isDatabaseUnavailable, isOverTime } from '../db/unavailable.ts';
import { LeaseBusy } from '../db/lease.ts';

const VALIDATION_MESSAGE: Record<string, string> = {
  querystring: 'Invalid query parameter',
  params: 'Invalid path parameter',
  headers: 'Invalid header',
  body: 'Invalid request body',
};

const STATUS_MESSAGE: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  503: 'Service Unavailable',
};

/** A database that is not there, or a query over its time limit: retryable, answered 503. */
const isUnavailable = (err: Error): boolean => isOverTime(err) || isDatabaseUnavailable(err);

/** Maps every error to the one documented shape. Never leaks a stack or an internal message. */
export function errorHandler(err: FastifyError | ApiError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return handleError(err, request, reply, NO_ROUTES);
}

/** Methods routed for a concrete path (lib/http/hardening.ts routeMethodIndex). */
export type MethodsFor = (path: string) => string[];
const NO_ROUTES: MethodsFor = () => [];

/** The error and not-found handlers, answering 405 with `allow` for a known path with another method. */
export function makeErrorHandlers(methodsFor: MethodsFor) {
  return {
    errorHandler: (err: FastifyError | ApiError | Error, request: FastifyRequest, reply: FastifyReply) => handleError(err, request, reply, methodsFor),
    notFoundHandler: (request: FastifyRequest, reply: FastifyReply) => notFound(request, reply, methodsFor),
  };
}

function handleError(err: FastifyError | ApiError | Error, request: FastifyRequest, reply: FastifyReply, methodsFor: MethodsFor): FastifyReply {
  // No route: whatever went wrong with the body (no parser for the method, bad JSON), the answer is 404/405.
  if (request.is404 && !(err instanceof ApiError)) return notFound(request, reply, methodsFor);
  if (err instanceof ApiError) {
    if (err.statusCode === 503) request.log.warn({ err: { message: err.message, details: err.details } }, 'service unavailable');
    else if (err.statusCode >= 500) request.log.error({ err }, 'request failed');
    if (err.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.retryAfterSeconds));
    if (err.statusCode === 503 && !reply.hasHeader('retry-after')) reply.header('retry-after', '5');
    return reply.code(err.statusCode).send(apiErrorBody(err));
  }
  const fe = err as FastifyError;
  if (fe.validation) {
    const part = fe.validationContext ?? 'body';
    const { details, fields } = validationProblems(fe.validation as never, part);
    // A cursor not in its documented form is a cursor problem like a forged one: start again without it.
    const onlyCursor = part === 'querystring' && fields.length > 0 && fields.every((f) => f.name === 'cursor');
    const reason = part === 'body' ? 'invalid_body' : onlyCursor ? 'invalid_cursor' : 'invalid_parameter';
    return reply.code(400).send(errorBody(400, VALIDATION_MESSAGE[part] ?? 'Bad Request', details, { reason, fields }));
  }
  if (err instanceof LeaseBusy) {
    // Its turn behind the tenant's other writes of the same kind did not come: they free it within a query's time.
    request.log.warn({ err: { name: err.name, message: err.message, lease: err.lease } }, 'lease busy');
    return reply
      .code(503)
      .header('retry-after', '1')
      .send(errorBody(503, 'Service Unavailable', [err.message], { reason: 'deadline_exceeded' }));
  }
  if (isUnavailable(err)) {
    request.log.warn({ err: { name: err.name, message: err.message } }, 'database unavailable');
    // A query over its time limit (QUERY_TIMEOUT_MS) is the request taking too long, not the database being gone.
    const overTime = isOverTime(err);
    const detail = overTime ? 'a database query exceeded its time limit, retry shortly' : 'database unavailable, retry shortly';
    return reply
      .code(503)
      .header('retry-after', '5')
      .send(errorBody(503, 'Service Unavailable', [detail], { reason: overTime ? 'deadline_exceeded' : 'database_unavailable' }));
  }
  const status = typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500 ? fe.statusCode : 500;
  if (status === 500) {
    request.log.error({ err }, 'unhandled error');
    return reply.code(500).send(errorBody(500, 'Internal Server Error', [`request id ${request.id}`], { reason: 'internal_error' }));
  }
  // Fastify's own 4xx (malformed JSON, body too large, bad content type): its message is safe and useful.
  // A body the JSON parser rejects is the body's problem; other codes say what they are.
  if (status === 400 && typeof fe.code === 'string' && fe.code.startsWith('FST_ERR_CTP')) {
    return reply
      .code(400)
      .send(errorBody(400, 'Invalid request body', [fe.message], { reason: 'invalid_body', fields: [{ in: 'body', name: '', detail: fe.message }] }));
  }
  return reply.code(status).send(errorBody(status, STATUS_MESSAGE[status] ?? 'Bad Request', [fe.message], { reason: reasonFor(status) }));
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return notFound(request, reply, NO_ROUTES);
}

function notFound(request: FastifyRequest, reply: FastifyReply, methodsFor: MethodsFor): FastifyReply {
  const path = request.url.split('?')[0] ?? '/';
  const allowed = methodsFor(path);
  // A route of this method matched and found nothing (a Swagger UI asset that does not exist): 404, not a 405 whose
  // Allow names the method itself (RFC 9110 §15.5.6).
  if (allowed.length > 0 && !allowed.includes(request.method)) {
    return reply
      .code(405)
      .header('allow', allowed.join(', '))
      .send(errorBody(405, 'Method Not Allowed', [`${request.method} is not supported on ${path}; allowed: ${allowed.join(', ')}`]));
  }
  return reply.code(404).send(errorBody(404, 'Not Found', [`no route ${request.method} ${path}`]));
}
