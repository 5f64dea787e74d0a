/**
 * One delivery attempt: a POST of the stored body, signed with the endpoint's
 * current secret, to the address the URL resolves to, checked against the
 * address policy at connect time (a name that resolves to a private address
 * is refused unless WEBHOOK_ALLOW_PRIVATE). No redirects, time-limited.
 */
import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { addressProblem } from './url-policy.ts';

export interface AttemptRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  allowPrivate: boolean;
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
          if (why) return callback(Object.assign(new Error(`${hostname} resolves to ${a.address}, ${why}; refused`), { code: 'EADDRREFUSED' }), '', 0);
        }
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
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
      if (why) return finish(null, `${host} is ${why}; refused`);
    }
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
    request.on('error', (err: NodeJS.ErrnoException) => finish(null, (err.code && !err.message.includes(err.code) ? `${err.code}: ` : '') + err.message.slice(0, 300)));
    request.end(req.body);
  });
}
