/**
 * One delivery attempt: a POST of the stored body, signed with the endpoint's
 * current secret, to the address the URL resolves to, checked against the
 * address policy at connect time (a name that resolves to a private address
 * is refused unless WEBHOOK_ALLOW_PRIVATE) and against the allowed ports
 * (WEBHOOK_ALLOWED_PORTS). No redirects, time-limited.
 *
 * The error recorded on a failed attempt is shown to the tenant (deliveries
 * list): it names the reason ("the host name resolves to a loopback address",
 * "connection refused", "TLS certificate has expired"), never an address the
 * name resolved to, so deliveries cannot be used to map internal names.
 */
import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { addressProblem, portProblem, type UrlPolicy } from './url-policy.ts';

export interface AttemptRequest extends UrlPolicy {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
}

export interface AttemptResult {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

const MAX_RESPONSE_BYTES = 64 * 1024;

/** dns.lookup, then the policy on every address returned. */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const list = Array.isArray(addresses) ? addresses : [];
      if (!allowPrivate) {
        for (const a of list) {
          const why = addressProblem(a.address);
          if (why) return callback(Object.assign(new Error(`refused: the host name resolves to ${why}`), { code: 'EADDRREFUSED' }), '', 0);
        }
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error('the host name has no address'), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

/** Socket and TLS error codes, as the tenant is told them (no addresses, no internal detail). */
const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  EPIPE: 'connection closed by the receiver',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed (temporary DNS failure)',
  EAI_FAIL: 'host name lookup failed',
  EPROTO: 'TLS handshake failed',
  CERT_HAS_EXPIRED: 'TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS certificate chain is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate cannot be verified',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'TLS certificate issuer unknown',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate does not match the host name',
  HPE_INVALID_CONSTANT: 'the receiver did not answer in HTTP',
};

/** What went wrong, in words fit for the tenant: our own refusals as they are, network errors by their code only. */
function reasonOf(err: NodeJS.ErrnoException): string {
  if (err.code === 'EADDRREFUSED' || (err.code === 'ENOTFOUND' && err.message === 'the host name has no address')) return err.message;
  if (/^timed out after \d+ ms$/.test(err.message)) return err.message;
  const code = typeof err.code === 'string' ? err.code : '';
  if (NETWORK_REASONS[code]) return NETWORK_REASONS[code];
  if (code.startsWith('ERR_TLS') || code.startsWith('CERT_') || code.includes('CERT')) return `TLS error (${code})`;
  return code ? `network error (${code})` : 'network error';
}

export function attemptDelivery(req: AttemptRequest): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (statusCode: number | null, error: string | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ statusCode, error, durationMs: elapsed() });
    };
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return finish(null, 'invalid URL');
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!req.allowPrivate && isIP(host)) {
      const why = addressProblem(host);
      if (why) return finish(null, `refused: the URL's address is ${why}`);
    }
    // Checked again here: the setting may have changed since the endpoint was created.
    const port = portProblem(url, req.allowedPorts);
    if (port) return finish(null, `refused: ${port}`);
    const client = url.protocol === 'https:' ? https : http;
    const request = client.request(url, {
      method: 'POST',
      headers: { ...req.headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(req.body)) },
      lookup: guardedLookup(req.allowPrivate),
      agent: false,
    });
    timer = setTimeout(() => {
      request.destroy(new Error(`timed out after ${req.timeoutMs} ms`));
    }, req.timeoutMs);
    request.on('response', (res) => {
      const status = res.statusCode ?? 0;
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > MAX_RESPONSE_BYTES) res.destroy();
      });
      const settle = () => {
        if (status >= 200 && status < 300) finish(status, null);
        else if (status >= 300 && status < 400) finish(status, `redirect (${status}) not followed`);
        else finish(status, `answered ${status}`);
      };
      res.on('end', settle);
      res.on('close', settle);
      res.on('error', settle);
    });
    request.on('error', (err: NodeJS.ErrnoException) => finish(null, reasonOf(err)));
    request.end(req.body);
  });
}
