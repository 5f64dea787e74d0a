import type { FastifySchemaCompiler } from 'fastify';
import type { FastifyRouteSchemaDef } from 'fastify/types/schema.js';
import { validators, type GeneratedValidator } from '../../generated/validators.js';
import { isDefaultPolicy, webhookUrlProblems, type UrlPolicy } from '../webhooks/url-policy.ts';
import { BINARY_MEDIA_TYPES, binaryBodyValidator } from './binary-bodies.ts';

/**
 * Fastify asks for a validator per route and part; we answer with the one
 * precompiled from the spec (`npm run generate`). A missing one means
 * generated/ is stale, which must stop the start-up, not silently skip checks.
 */
export function validatorCompilerFor(opts: { webhookUrls: UrlPolicy }): FastifySchemaCompiler<unknown> {
  return (route) => compile(route, opts.webhookUrls);
}

/** Any http(s) URL without credentials: what a webhook URL must be when private addresses are allowed. */
const ANY_HTTP_URL = /^[Hh][Tt][Tt][Pp][Ss]?:\/\/[^\s/?#@]+([/?#]\S*)?$/;
const NOT_ACCEPTED_FORM = 'is not in the accepted form: http(s)://, then a host name whose last label starts with a letter or a public IPv4 address, an optional port (443 or 80), path, query and fragment';

/** The body validators whose `url` is a WebhookUrl (spec: schemas/webhooks.yaml). */
const WEBHOOK_URL_BODIES = new Set(['POST /api/webhooks body']);

/**
 * The WebhookUrl pattern says which URLs are accepted; when it refuses one this
 * says why (a loopback name, a private address, a port, …) instead of quoting
 * the pattern. With WEBHOOK_ALLOW_PRIVATE=true or other WEBHOOK_ALLOWED_PORTS, a
 * URL the pattern leaves out only for its address or port passes when
 * url-policy accepts it under those settings. The published schema describes
 * the default (private addresses refused, ports 443 and 80).
 */
function explainWebhookUrl(validate: GeneratedValidator, policy: UrlPolicy): GeneratedValidator {
  const relaxed = !isDefaultPolicy(policy);
  const wrapped = ((data: unknown): boolean => {
    if (validate(data)) {
      wrapped.errors = null;
      return true;
    }
    const errors = validate.errors ?? [];
    // `pattern` is the accepted form, `not` the addresses it leaves out (spec: WebhookUrl).
    const urlErrors = errors.filter((e) => e.instancePath === '/url' && (e.keyword === 'pattern' || e.keyword === 'not'));
    const url = (data as { url?: unknown } | null)?.url;
    if (urlErrors.length === 0 || typeof url !== 'string') {
      wrapped.errors = errors;
      return false;
    }
    const problems = webhookUrlProblems(url, policy).map((p) => p.replace(/^url: /, ''));
    if (relaxed && problems.length === 0 && urlErrors.length === errors.length && ANY_HTTP_URL.test(url)) {
      wrapped.errors = null;
      return true;
    }
    const explained = (problems.length ? problems : [NOT_ACCEPTED_FORM]).map((message) => ({ ...urlErrors[0]!, message }));
    wrapped.errors = [...errors.filter((e) => !urlErrors.includes(e)), ...explained];
    return false;
  }) as GeneratedValidator;
  return wrapped;
}

function compile({ method, url, httpPart, contentType }: FastifyRouteSchemaDef<unknown>, webhookUrls: UrlPolicy) {
  // Binary bodies (string/binary in the spec) are bytes, not JSON: nothing to validate but their type.
  if (httpPart === 'body' && (BINARY_MEDIA_TYPES as readonly string[]).includes(contentType ?? '')) return binaryBodyValidator as never;
  // The HEAD twin of a GET route (exposeHeadRoutes) validates exactly as the GET.
  const key = `${method === 'HEAD' ? 'GET' : method} ${url} ${httpPart}`;
  const validate = validators[key];
  if (!validate) throw new Error(`no generated validator for "${key}": run npm run generate`);
  if (WEBHOOK_URL_BODIES.has(key)) return explainWebhookUrl(validate, webhookUrls) as never;
  return validate as never;
};
