/**
 * The webhook URL's validation message: the generated validator of a body with a WebhookUrl,
 * wrapped so that a refused URL says why (lib/http/validator-compiler.ts applies it; the
 * app's validation plugin, lib/app/validation.ts, passes it in).
 */
import type { GeneratedValidator } from '../../generated/validators.js';
import type { ValidatorRefiners } from '../http/validator-compiler.ts';
import { DEFAULT_ALLOWED_PORTS, webhookUrlProblems, type UrlPolicy } from './url-policy.ts';

/** Any http(s) URL without credentials: what a webhook URL must be when private addresses are allowed. */
const ANY_HTTP_URL = /^[Hh][Tt][Tt][Pp][Ss]?:\/\/[^\s/?#@]+([/?#]\S*)?$/;
const NOT_ACCEPTED_FORM =
  'is not in the accepted form: http(s)://, then a host name whose last label starts with a letter or a public IPv4 address, an optional port (443 or 80), path, query and fragment';

/** The URL without its port (`scheme://host:port…` → `scheme://host…`), for a host the pattern can name (no IPv6 literal). */
const withoutPort = (url: string): string => url.replace(/^([Hh][Tt][Tt][Pp][Ss]?:\/\/[^\s/?#@:[\]]+):\d*(?=[/?#]|$)/, '$1');

/** Whether the policy lets in ports other than the default ones (WEBHOOK_ALLOWED_PORTS). */
const relaxesPorts = (policy: UrlPolicy): boolean => policy.allowedPorts === 'any' || policy.allowedPorts.some((p) => !DEFAULT_ALLOWED_PORTS.includes(p));

/**
 * The WebhookUrl pattern says which URLs are accepted; when it refuses one this
 * says why (a loopback name, a private address, a port, …) instead of quoting
 * the pattern. Each setting relaxes only what it changes, for a URL url-policy
 * accepts under those settings: WEBHOOK_ALLOW_PRIVATE=true lets in the
 * addresses and names the pattern leaves out; other WEBHOOK_ALLOWED_PORTS let
 * in a URL the pattern refuses only for its port (the same URL without the
 * port passes it), and nothing else: not an IPv6 literal, not a reserved
 * address. The published schema describes the default (private addresses
 * refused, ports 443 and 80).
 */
function explainWebhookUrl(validate: GeneratedValidator, policy: UrlPolicy): GeneratedValidator {
  const ports = relaxesPorts(policy);
  /** Whether the pattern refuses `url` only for what the policy relaxes. */
  const relaxedFor = (data: object, url: string): boolean => {
    if (!ANY_HTTP_URL.test(url)) return false;
    if (policy.allowPrivate) return true;
    if (!ports) return false;
    const portless = withoutPort(url);
    return portless !== url && validate({ ...data, url: portless });
  };
  const wrapped = ((data: unknown): boolean => {
    if (validate(data)) {
      wrapped.errors = null;
      return true;
    }
    const errors = [...(validate.errors ?? [])];
    // `pattern` is the accepted form, `not` the addresses it leaves out (spec: WebhookUrl).
    const urlErrors = errors.filter((e) => e.instancePath === '/url' && (e.keyword === 'pattern' || e.keyword === 'not'));
    const url = (data as { url?: unknown } | null)?.url;
    if (urlErrors.length === 0 || typeof url !== 'string') {
      wrapped.errors = errors;
      return false;
    }
    const problems = webhookUrlProblems(url, policy).map((p) => p.replace(/^url: /, ''));
    if (problems.length === 0 && urlErrors.length === errors.length && relaxedFor(data as object, url)) {
      wrapped.errors = null;
      return true;
    }
    const explained = (problems.length ? problems : [NOT_ACCEPTED_FORM]).map((message) => ({ ...urlErrors[0]!, message }));
    wrapped.errors = [...errors.filter((e) => !urlErrors.includes(e)), ...explained];
    return false;
  }) as GeneratedValidator;
  return wrapped;
}

/** The body validators whose `url` is a WebhookUrl (spec: schemas/webhooks.yaml), refined under `policy`. */
export function webhookUrlRefiners(policy: UrlPolicy): ValidatorRefiners {
  return { 'POST /api/webhooks body': (validate) => explainWebhookUrl(validate, policy) };
}
