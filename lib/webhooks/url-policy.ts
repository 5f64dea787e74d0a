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

/** The IPv4 address in two 16-bit groups. */
const v4Of = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

function v6Problem(ip: string): string | null {
  const g = v6Groups(ip);
  if (g.every((x) => x === 0)) return 'an unspecified address';
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'a loopback address';
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and IPv4-translated (::ffff:0:a.b.c.d,
  // RFC 2765): judge the IPv4 address.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) return v4Problem(v4Of(g[6]!, g[7]!));
  if (g.slice(0, 4).every((x) => x === 0) && g[4] === 0xffff && g[5] === 0) return v4Problem(v4Of(g[6]!, g[7]!));
  // 6to4 (2002:a.b.c.d::/48): reaches the IPv4 address through a relay; judge it.
  if (g[0] === 0x2002) {
    const why = v4Problem(v4Of(g[1]!, g[2]!));
    return why ? `a 6to4 address of ${why}` : null;
  }
  if ((g[0]! & 0xfe00) === 0xfc00) return 'a private (unique local) address';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'a link-local address';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'a site-local address';
  if ((g[0]! & 0xff00) === 0xff00) return 'a multicast address';
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'a documentation address';
  if (g[0] === 0x3fff && g[1]! < 0x1000) return 'a documentation address'; // 3fff::/20
  // 64:ff9b::/96 and the local-use 64:ff9b:1::/48 (NAT64: may embed a private IPv4).
  if (g[0] === 0x64 && g[1] === 0xff9b) return 'a NAT64 address';
  if (g[0] === 0x100 && g[1] === 0 && g[2] === 0 && g[3] === 0) return 'a discard-only address'; // 100::/64
  // 2001::/23, IETF protocol assignments: Teredo (2001::/32, tunnels to an IPv4 address), benchmarking, ORCHID, …
  if (g[0] === 0x2001 && g[1] === 0) return 'a Teredo address';
  if (g[0] === 0x2001 && g[1]! < 0x200) return 'a reserved address';
  // Global unicast is 2000::/3; the rest of the space not named above is reserved.
  if ((g[0]! & 0xe000) !== 0x2000) return 'a reserved address';
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
