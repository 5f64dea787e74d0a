/**
 * A self-signed X.509 certificate made with node:crypto alone (no openssl binary, no package), for
 * a local HTTPS server a test trusts explicitly: an ECDSA P-256 key, the certificate DER-encoded by
 * hand (RFC 5280 §4.1) with a subject alternative name for each host given (IP addresses and DNS
 * names) and `cA: true`, so it is its own trust anchor.
 */
import { generateKeyPairSync, sign, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';

const der = (tag: number, ...parts: Buffer[]): Buffer => {
  const body = Buffer.concat(parts);
  const n = body.length;
  const length = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), length, body]);
};
const seq = (...parts: Buffer[]) => der(0x30, ...parts);
const oid = (dotted: string): Buffer => {
  const [a, b, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const bytes = [40 * a + b];
  for (const n of rest) {
    const groups = [n & 0x7f];
    for (let v = n >> 7; v > 0; v >>= 7) groups.unshift((v & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return der(0x06, Buffer.from(bytes));
};
const utf8 = (s: string) => der(0x0c, Buffer.from(s, 'utf8'));
const utcTime = (d: Date) => der(0x17, Buffer.from(`${d.toISOString().slice(2, 19).replace(/[-T:]/g, '')}Z`, 'ascii'));
const ipBytes = (ip: string): Buffer =>
  isIP(ip) === 4
    ? Buffer.from(ip.split('.').map(Number))
    : Buffer.from(
        new URL(`http://[${ip}]`).hostname
          .slice(1, -1)
          .split(':')
          .flatMap((g, _i, all) => (g === '' ? Array<string>(8 - all.filter(Boolean).length).fill('0') : [g]))
          .flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]),
      );

export interface SelfSigned {
  /** PEM of the certificate: the server's certificate and the client's trust anchor. */
  cert: string;
  /** PEM of the private key (PKCS #8). */
  key: string;
}

export function selfSignedCertificate(hosts: string[], commonName = 'freight test'): SelfSigned {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const ecdsaWithSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const name = seq(der(0x31, seq(oid('2.5.4.3'), utf8(commonName))));
  const now = Date.now();
  const altNames = seq(...hosts.map((h) => (isIP(h) ? der(0x87, ipBytes(h)) : der(0x82, Buffer.from(h, 'ascii')))));
  const extensions = der(
    0xa3,
    seq(
      seq(oid('2.5.29.17'), der(0x04, altNames)),
      // basicConstraints, critical: a CA (its own trust anchor).
      seq(oid('2.5.29.19'), der(0x01, Buffer.from([0xff])), der(0x04, seq(der(0x01, Buffer.from([0xff]))))),
    ),
  );
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, Buffer.from([0x01, ...Array.from({ length: 8 }, () => Math.floor(Math.random() * 256))])),
    ecdsaWithSha256,
    name,
    seq(utcTime(new Date(now - 60_000)), utcTime(new Date(now + 24 * 3600_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  );
  const signature = sign('sha256', tbs, privateKey);
  const certificate = seq(tbs, ecdsaWithSha256, der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const cert = `-----BEGIN CERTIFICATE-----\n${certificate
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END CERTIFICATE-----\n`;
  // Parsed back, so a malformed encoding fails here rather than as a TLS error.
  new X509Certificate(cert);
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}
