/**
 * Credentials never reach the logs. Headers are redacted by path (`x-api-key`, `authorization`,
 * `cookie`); URLs, logged with every request, by content: a client may put its key in the URL
 * (`?api_key=…`, a path segment), which the service refuses but would otherwise log verbatim.
 * Redacted in a URL: the value of a query parameter named like a credential, and any path
 * segment or query value shaped like one of this service's keys.
 */
import type { FastifyRequest } from 'fastify';

export const REDACTED = '[Redacted]';

/** Header paths pino redacts on the logged request. */
export const REDACTED_HEADER_PATHS = ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'];

const CREDENTIAL_PARAMETER =
  /^(x[-_]?)?(api[-_]?key|apikey|key|token|access[-_]?token|auth|authorization|bearer|secret|password|passwd|pwd|session[-_]?token)$/i;
/** Keys this service issues (`fbo_` + 32 characters) and the demo keys (`demo_<tenant>_<hex>`). */
const KEY_SHAPED = /^(fbo|demo)_[A-Za-z0-9_-]{12,}$/;

const decode = (s: string): string => {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
};

/** `url` (path and query) with credentials replaced by [Redacted]. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const query = q === -1 ? null : url.slice(q + 1);
  const safePath = path
    .split('/')
    .map((segment) => (KEY_SHAPED.test(decode(segment)) ? REDACTED : segment))
    .join('/');
  if (query === null) return safePath;
  const safeQuery = query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = decode(eq === -1 ? pair : pair.slice(0, eq));
      const value = eq === -1 ? '' : pair.slice(eq + 1);
      if (eq !== -1 && (CREDENTIAL_PARAMETER.test(name) || KEY_SHAPED.test(decode(value)))) return `${pair.slice(0, eq)}=${REDACTED}`;
      return pair;
    })
    .join('&');
  return `${safePath}?${safeQuery}`;
}

/** pino serializers: Fastify's request fields, the URL redacted. */
export const logSerializers = {
  req(req: FastifyRequest) {
    return {
      method: req.method,
      url: redactUrl(req.url),
      host: req.host,
      remoteAddress: req.ip,
      remotePort: req.socket ? req.socket.remotePort : undefined,
    };
  },
};
