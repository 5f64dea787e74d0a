/**
 * Limits and protocol edges, all answered in the service's error shape:
 *
 * - `clientErrorHandler`: what Node's HTTP parser refuses before any route runs
 *   (request not received within REQUEST_TIMEOUT_MS → 408, headers over 16 KiB
 *   → 431, malformed HTTP → 400). Fastify's default writes another JSON shape.
 * - `requestDeadline(ms)`: an onRequest hook bounding the whole handling of an
 *   operation (authentication included): a request still unanswered after `ms`
 *   (a database that accepts connections but never answers) gets 503 with
 *   `retry-after`, instead of hanging until the client gives up.
 * - `onlyQueryParameters`: unknown query parameters are a 400 on every
 *   operation, those without query parameters of their own included.
 * - `requireBody`: a preValidation hook for operations whose spec requires a
 *   body. Fastify validates bodies per content type, so a request without one
 *   would reach the handler with `undefined`; it is a 400 instead.
 * - `routeMethodIndex(app)`: which methods the service routes for a path, so
 *   that a known path with another method is 405 with `allow` (not 404).
 * - `rewriteUnroutable`: URLs the router would refuse (bad encoding, over-long
 *   path parameter) are routed to lib/app/unroutable.ts, which counts and
 *   authenticates them before its 400; `frameworkErrors` answers any other
 *   URL the router refuses with a 400 in the error shape.
 */
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBody } from './api-error.ts';
import { validationProblems } from './validation-details.ts';

/** Headers every answer carries (lib/app/request-id.ts and lib/app/response-headers.ts set the same ones). */
const BASE_HEADERS = 'content-type: application/json; charset=utf-8\r\nx-content-type-options: nosniff\r\ncache-control: no-store\r\nconnection: close\r\n';

/** Fastify `clientErrorHandler`: protocol-level refusals in the error shape, then the socket is closed. */
export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let detail = 'malformed HTTP request';
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    detail = 'the request was not received in time';
  } else if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    detail = 'request headers are larger than the service accepts (16 KiB)';
  }
  const message = status === 400 ? 'Bad Request' : (STATUS_CODES[status] ?? 'Bad Request');
  const body = JSON.stringify(errorBody(status, message, [detail], status === 400 ? { reason: 'invalid_request' } : {}));
  this.log.debug({ code: err.code, status }, 'client error');
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${message}\r\n${BASE_HEADERS}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }
  socket.destroy();
}

/** Where `rewriteUnroutable` sends a path the router would refuse: `<prefix>/<api|keyless|other>/<problem>` (lib/app/unroutable.ts). */
export const UNROUTABLE_PREFIX = '/__unroutable';
/** Fastify's `maxParamLength` (its default): a longer path segment cannot be a parameter the router matches. */
export const MAX_PATH_SEGMENT = 100;

const UNROUTABLE_DETAIL = {
  'long-segment': `a path parameter is longer than the service accepts (${MAX_PATH_SEGMENT} characters)`,
  'bad-url': 'the path is not valid percent-encoded UTF-8',
} as const;
export type UnroutableProblem = keyof typeof UNROUTABLE_DETAIL;

export const unroutableError = (problem: UnroutableProblem): ApiError =>
  new ApiError(400, 'Invalid path parameter', [UNROUTABLE_DETAIL[problem]], { reason: 'invalid_request' });

/** Where a refused path goes: its area decides whether it is authenticated first. */
export type UnroutableArea = 'api' | 'keyless' | 'other';

/**
 * Fastify `rewriteUrl`: a path the router would refuse before any hook runs (malformed
 * percent-encoding, a segment over 100 characters) goes to a route of its own instead, which
 * counts it in the rate limit and, under /api/, authenticates it first like every operation (401
 * before 400), then answers the 400; under `keylessPrefixes` (the operations that need no key: a
 * shared link's token) it is not authenticated, as those operations are not. Other paths are unchanged.
 */
export function rewriteUnroutable(req: { url?: string }, keylessPrefixes: readonly string[] = []): string {
  const url = req.url ?? '/';
  const end = url.indexOf('?');
  const path = end < 0 ? url : url.slice(0, end);
  let problem: UnroutableProblem | null = null;
  if (path.split('/').some((segment) => segment.length > MAX_PATH_SEGMENT)) problem = 'long-segment';
  else if (path.includes('%')) {
    try {
      decodeURIComponent(path);
    } catch {
      problem = 'bad-url';
    }
  }
  if (problem === null) return url;
  const area: UnroutableArea = keylessPrefixes.some((p) => path.startsWith(p)) ? 'keyless' : path.startsWith('/api/') ? 'api' : 'other';
  return `${UNROUTABLE_PREFIX}/${area}/${problem}`;
}

/** The static start of each /api/ path whose operation needs no key (`security: []`), e.g. `/api/shared-exports/`. */
export function keylessApiPrefixes(operations: readonly { path: string; secured: boolean }[]): string[] {
  const staticStart = (path: string): string => (path.includes('{') ? path.slice(0, path.indexOf('{')) : path);
  return [...new Set(operations.filter((op) => !op.secured && op.path.startsWith('/api/')).map((op) => staticStart(op.path)))];
}

/**
 * Fastify `frameworkErrors`: a URL the router cannot match all the same is a 400 in the error
 * shape, not Fastify's own body echoing the path.
 */
export function frameworkErrors(error: Error & { code?: string }, request: FastifyRequest, reply: FastifyReply): void {
  const detail =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? UNROUTABLE_DETAIL['long-segment']
      : error.code === 'FST_ERR_BAD_URL'
        ? UNROUTABLE_DETAIL['bad-url']
        : 'the request cannot be routed';
  void reply
    .code(400)
    .header('x-request-id', request.id)
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .send(errorBody(400, 'Invalid path parameter', [detail], { reason: 'invalid_request' }));
}

/** onRequest hook: answers 503 when the request is still unanswered after `ms`. */
export function requestDeadline(ms: number) {
  return function deadline(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
    const expire = () => {
      if (reply.sent || reply.raw.headersSent || reply.raw.destroyed) return;
      request.log.warn({ deadlineMs: ms }, 'request deadline exceeded');
      void reply
        .code(503)
        .header('retry-after', '5')
        .send(errorBody(503, 'Service Unavailable', [`the request did not complete within ${ms} ms; retry shortly`], { reason: 'deadline_exceeded' }));
    };
    const timer = setTimeout(() => {
      // Still receiving the request: the client's slowness is Node's to answer (408); once the
      // body is in, the deadline has passed. (Skipping it then let a slow upload run unbounded.)
      if (!request.raw.complete) request.raw.once('end', expire);
      else expire();
    }, ms);
    timer.unref();
    reply.raw.once('close', () => clearTimeout(timer));
    done();
  };
}

/**
 * preValidation hook for operations without query parameters of their own (the others reject
 * unknown ones through their validators): any query parameter is a 400, in the validators' words,
 * so the rule is the same on every operation (a misspelt or obsolete parameter is never ignored).
 * `allowed` names the ones a route takes outside the spec's validators (MCP's `sessionId`).
 */
export function onlyQueryParameters(allowed: readonly string[] = []) {
  return function rejectUnknownQuery(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
    const names = Object.keys((request.query as Record<string, unknown> | undefined) ?? {}).filter((n) => !allowed.includes(n));
    if (names.length === 0) return done();
    const errors = names.map((name) => ({
      keyword: 'additionalProperties',
      instancePath: '',
      schemaPath: '#/additionalProperties',
      params: { additionalProperty: name },
    }));
    const { details, fields } = validationProblems(errors as never, 'querystring');
    done(new ApiError(400, 'Invalid query parameter', details, { reason: 'invalid_parameter', fields }));
  };
}

/** preValidation hook for operations with a required JSON body. */
export async function requireBody(request: FastifyRequest): Promise<void> {
  if (request.body === undefined) {
    throw new ApiError(400, 'Invalid request body', ['a JSON body is required (content-type: application/json)'], {
      reason: 'invalid_body',
      fields: [{ in: 'body', name: '', detail: 'a JSON body is required (content-type: application/json)' }],
    });
  }
}

/**
 * An operation that takes no body refuses one (`POST …/links` with `{"expiresIn": 60}` took the default and said
 * nothing): what the body says would be silently ignored. None, an empty one or `{}` (some clients always send
 * one) says nothing and passes.
 */
export async function noBody(request: FastifyRequest): Promise<void> {
  const body: unknown = request.body;
  const saysNothing =
    body === undefined || body === null || body === '' || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);
  if (saysNothing) return;
  const detail = 'this operation takes no request body: send its parameters in the query string';
  throw new ApiError(400, 'Invalid request body', [detail], { reason: 'invalid_body', fields: [{ in: 'body', name: '', detail }] });
}

export interface RouteMethodIndex {
  /** Methods routed for a concrete path (`/api/alerts/jobs/abc` → ['DELETE']); empty when the path is unknown. */
  methodsFor: (path: string) => string[];
}

const patternOf = (url: string): RegExp =>
  new RegExp(
    `^${url
      .split(/(:[A-Za-z0-9_]+|\*)/)
      .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('')}$`,
  );

const REGISTERED = new WeakMap<FastifyInstance, { method: string; url: string }[]>();

/** Every route (method, url) registered on `app` after routeMethodIndex(app) ran: what the service really serves. */
export const registeredRoutes = (app: FastifyInstance): { method: string; url: string }[] => [...(REGISTERED.get(app) ?? [])];

/** Collects every route registered after this call (onRoute hook). */
export function routeMethodIndex(app: FastifyInstance): RouteMethodIndex {
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  const list: { method: string; url: string }[] = [];
  REGISTERED.set(app, list);
  app.addHook('onRoute', (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map(String);
    const url = route.url ?? route.path;
    routes.push({ pattern: patternOf(url), methods });
    for (const method of methods) list.push({ method, url });
  });
  return {
    methodsFor(path) {
      const found = new Set<string>();
      for (const r of routes) if (r.pattern.test(path)) for (const m of r.methods) found.add(m);
      return [...found].sort();
    },
  };
}
