/**
 * Outbound safety for webhook URLs (server-side request forgery): http(s)
 * only, no credentials, ports 443 and 80 only, and no address a tenant should
 * not reach through us: loopback, private, link-local (cloud metadata),
 * carrier-grade NAT, multicast, reserved. Checked when an endpoint is created
 * (literal addresses and `localhost`) and again at every delivery on the
 * address the host name resolves to (lib/webhooks/deliver.ts), so DNS cannot be
 * used to slip past. WEBHOOK_ALLOW_PRIVATE=true lifts the address rules and
 * WEBHOOK_ALLOWED_PORTS the port rule (tests, on-premise receivers).
 */
import { isIP } from 'node:net';

/** What a deployment allows webhook URLs to reach (config: WEBHOOK_ALLOW_PRIVATE, WEBHOOK_ALLOWED_PORTS). */
export interface UrlPolicy {
  allowPrivate: boolean;
  /** Ports a URL may name (its scheme's default counts as named): a list, or `any`. */
  allowedPorts: readonly number[] | 'any';
}

/** The default: public addresses, ports 443 and 80 (what the published WebhookUrl pattern states). */
export const DEFAULT_ALLOWED_PORTS: readonly number[] = [443, 80];

/** The port a URL connects to: its own, or its scheme's default. */
export const effectivePort = (url: URL): number => (url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80);

/** Why the URL's port is not allowed, or null. */
export function portProblem(url: URL, allowedPorts: UrlPolicy['allowedPorts']): string | null {
  if (allowedPorts === 'any') return null;
  const port = effectivePort(url);
  if (allowedPorts.includes(port)) return null;
  return `port ${port} is not allowed; webhook URLs use port ${allowedPorts.join(' or ')} (WEBHOOK_ALLOWED_PORTS)`;
}

/** Whether a policy is the default one the published pattern describes. */
export const isDefaultPolicy = (policy: UrlPolicy): boolean =>
  !policy.allowPrivate &&
  policy.allowedPorts !== 'any' &&
  policy.allowedPorts.length === DEFAULT_ALLOWED_PORTS.length &&
  DEFAULT_ALLOWED_PORTS.every((p) => (policy.allowedPorts as readonly number[]).includes(p));

const V4_BLOCKS: [string, number, string][] = [
  ['0.0.0.0', 8, 'a "this network" address'],
  ['10.0.0.0', 8, 'a private address'],
  ['100.64.0.0', 10, 'a carrier-grade NAT address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.0.0', 16, 'a link-local address'],
  ['172.16.0.0', 12, 'a private address'],
  ['192.0.0.0', 24, 'a reserved address'],
  ['192.0.2.0', 24, 'a documentation address'],
  ['192.168.0.0', 16, 'a private address'],
  ['198.18.0.0', 15, 'a benchmarking address'],
  ['198.51.100.0', 24, 'a documentation address'],
  ['203.0.113.0', 24, 'a documentation address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['240.0.0.0', 4, 'a reserved address'],
];

const v4ToInt = (ip: string): number => ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);

function v4Problem(ip: string): string | null {
  const n = v4ToInt(ip);
  for (const [base, bits, what] of V4_BLOCKS) {
    const size = 2 ** (32 - bits);
    const start = v4ToInt(base);
    if (n >= start && n < start + size) return what;
  }
  return null;
}

/** Expands an IPv6 address to its 8 groups (numbers). */
function v6Groups(ip: string): number[] {
  let s = ip.toLowerCase().split('%')[0]!;
  // A trailing dotted quad (::ffff:1.2.3.4) becomes two groups.
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (quad) {
    const n = v4ToInt(quad[1]!);
    s = s.slice(0, -quad[1]!.length) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array<string>(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map((g) => parseInt(g || '0', 16));
}

function v6Problem(ip: string): string | null {
  const g = v6Groups(ip);
  if (g.every((x) => x === 0)) return 'an unspecified address';
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'a loopback address';
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible: judge the IPv4 address.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) {
    return v4Problem(`${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`);
  }
  if ((g[0]! & 0xfe00) === 0xfc00) return 'a private (unique local) address';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'a link-local address';
  if ((g[0]! & 0xff00) === 0xff00) return 'a multicast address';
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'a documentation address';
  if (g[0] === 0x64 && g[1] === 0xff9b) return 'a NAT64 address'; // may embed a private IPv4
  return null;
}

/** Why an IP address may not receive webhooks, or null when it may. */
export function addressProblem(ip: string): string | null {
  const family = isIP(ip);
  if (family === 4) return v4Problem(ip);
  if (family === 6) return v6Problem(ip);
  return 'not an IP address';
}

const LOCAL_NAMES = /(^|\.)(localhost|localhost\.localdomain|ip6-localhost|ip6-loopback)\.?$/i;

/** Problems with a webhook URL (empty when acceptable). Pure: no DNS. */
export function webhookUrlProblems(raw: string, policy: UrlPolicy): string[] {
  const { allowPrivate } = policy;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return ['url: not a valid absolute URL'];
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return [`url: the scheme must be http or https (got ${url.protocol.replace(':', '')})`];
  const problems: string[] = [];
  if (url.username || url.password) problems.push('url: credentials in the URL are not allowed (send them in the path or ask for signature checks)');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!host) problems.push('url: a host is required');
  else if (!allowPrivate) {
    if (LOCAL_NAMES.test(host)) problems.push(`url: ${host} is a loopback name; webhook URLs must be public (WEBHOOK_ALLOW_PRIVATE=true allows it)`);
    else if (isIP(host)) {
      const why = addressProblem(host);
      if (why) problems.push(`url: ${host} is ${why}; webhook URLs must be public (WEBHOOK_ALLOW_PRIVATE=true allows it)`);
    }
  }
  const port = portProblem(url, policy.allowedPorts);
  if (port) problems.push(`url: ${port}`);
  return problems;
}
