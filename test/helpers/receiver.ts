/**
 * A webhook receiver on 127.0.0.1 for the tests: verifies each delivery's
 * signature with the secrets it is told, answers as told (200, an error
 * status, a redirect, or nothing: `down` closes the listening socket).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../../lib/webhooks/signature.ts';

export interface Received {
  path: string;
  eventId: string;
  eventType: string;
  attempt: number;
  signature: string;
  body: string;
  /** Whether the signature verified with the secret of `path` at that moment. */
  verified: boolean;
  answered: number;
}

export interface Receiver {
  url(path: string): string;
  port: number;
  received: Received[];
  /** Secret per path (what the receiver's owner configured). */
  secrets: Map<string, string>;
  /** Status to answer per path (default 200; a bad signature always gets 400). */
  status: Map<string, number>;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const secrets = new Map<string, string>();
  const status = new Map<string, number>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      const path = req.url ?? '/';
      const signature = String(req.headers['x-freight-signature'] ?? '');
      const secret = secrets.get(path);
      const verified = secret !== undefined && verifySignature(secret, body, signature, Math.floor(Date.now() / 1000));
      const answer = verified ? (status.get(path) ?? 200) : 400;
      received.push({
        path,
        eventId: String(req.headers['x-freight-event-id'] ?? ''),
        eventType: String(req.headers['x-freight-event-type'] ?? ''),
        attempt: Number(req.headers['x-freight-delivery-attempt']),
        signature,
        body,
        verified,
        answered: answer,
      });
      if (answer >= 300 && answer < 400) res.setHeader('location', `${path}/elsewhere`);
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(verified ? 'ok' : 'bad signature');
    });
  });
  server.keepAliveTimeout = 1;
  const listen = (p: number) => new Promise<void>((resolve, reject) => server.once('error', reject).listen(p, '127.0.0.1', () => resolve()));
  await listen(port);
  const actual = (server.address() as AddressInfo).port;
  const down = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    url: (path: string) => `http://127.0.0.1:${actual}${path}`,
    port: actual,
    received,
    secrets,
    status,
    down,
    async up() {
      await listen(actual);
    },
    async close() {
      if (server.listening) await down();
    },
  };
}
