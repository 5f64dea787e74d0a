/**
 * Revocation across instances (issue 40; docs/mcp.md, "Hosted clients: OAuth"): two service
 * processes on one database, one issuer (as behind a load balancer), the key cache's TTL set to
 * five minutes so that waiting for it cannot be what makes a revocation count. A token obtained on
 * instance A through the authorization server's HTTP interface (registration, the consent form,
 * the code, PKCE) and in use on instance B stops working on B at once when its API key is revoked
 * by another process (as `npm run apikey -- revoke` does), and when another token is revoked at
 * A's revocation endpoint.
 */
import type { Test } from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { ensureIndexes } from '../../lib/service-indexes.ts';
import { createApiKey, revokeApiKey } from '../../lib/auth/api-keys.ts';
import { startService } from '../helpers/service.ts';

export default async function tokenRevocationTests(t: Test): Promise<void> {
  t.setTimeout(300_000);
  const TENANT = 'TGO850101AB1';
  const REDIRECT = 'http://127.0.0.1:9/callback';

  async function freePort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
  }

  const engine = await startEmbeddedMongo({ shortLived: true });
  t.teardown(() => engine.stop());
  const { client, db } = await connectMongo(engine.uri, 'tokens');
  t.teardown(() => client.close());
  await ensureIndexes(db);

  const portA = await freePort();
  const issuer = `http://127.0.0.1:${portA}`;
  const env = { OAUTH_ISSUER: issuer, API_KEY_CACHE_TTL_MS: '300000', ALERT_WORKER: 'false', RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000' };
  const [a, b] = await Promise.all([
    // Two services starting at once on a loaded machine: more than the helper's default minute.
    startService({ mongodbUri: engine.uri, mongodbDb: 'tokens', env: { ...env, PORT: String(portA) }, timeoutMs: 150_000 }),
    startService({ mongodbUri: engine.uri, mongodbDb: 'tokens', env, timeoutMs: 150_000 }),
  ]);
  t.teardown(() => Promise.all([a.stop(), b.stop()]));
  t.equal(a.base, issuer, 'instance A answers at the issuer');

  /** A browser's cookies, by name (enough for one authorization). */
  class Jar {
    private readonly cookies = new Map<string, string>();
    take(res: Response): void {
      for (const line of res.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const at = pair!.indexOf('=');
        this.cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1));
      }
    }
    header(): string {
      return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    }
  }

  /** The authorization code flow against instance A by plain HTTP, the consent form posted as the carrier's browser would; answers the access token. */
  async function tokenFor(apiKey: string): Promise<{ token: string; clientId: string }> {
    const registration = await fetch(`${issuer}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'two instances',
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code'],
      }),
    });
    const { client_id } = (await registration.json()) as { client_id: string };
    const verifier = randomBytes(32).toString('base64url');
    const url = new URL(`${issuer}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      client_id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'read',
      resource: `${issuer}/mcp`,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      state: 's',
    }))
      url.searchParams.set(k, v);
    const jar = new Jar();
    let res = await fetch(url, { redirect: 'manual' });
    jar.take(res);
    const consent = new URL(res.headers.get('location')!, issuer);
    res = await fetch(consent, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ api_key: apiKey, scope: 'read', decision: 'approve' }),
    });
    jar.take(res);
    // The consent hands back to the authorization endpoint, which redirects to the client with the code.
    for (let hops = 0; hops < 5 && !res.headers.get('location')?.startsWith(REDIRECT); hops++) {
      res = await fetch(new URL(res.headers.get('location')!, issuer), { redirect: 'manual', headers: { cookie: jar.header() } });
      jar.take(res);
    }
    const code = new URL(res.headers.get('location') ?? REDIRECT).searchParams.get('code');
    if (!code) throw new Error(`no code: ${res.status} ${res.headers.get('location')}`);
    const token = await fetch(`${issuer}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        client_id,
        code_verifier: verifier,
        resource: `${issuer}/mcp`,
      }),
    });
    const { access_token } = (await token.json()) as { access_token: string };
    return { token: access_token, clientId: client_id };
  }

  /** An MCP initialize with the token on an instance: its HTTP status. */
  const mcpStatus = async (base: string, token: string): Promise<number> => {
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
      }),
    });
    await res.body?.cancel();
    return res.status;
  };

  t.test('a key revoked by another process: its token refused on instance B at once, not after the key cache', async (t) => {
    const { key, record } = await createApiKey(db, TENANT, 'agent', ['read', 'write']);
    const { key: otherKey } = await createApiKey(db, TENANT, 'other agent', ['read']);
    const { token } = await tokenFor(key);
    const { token: other } = await tokenFor(otherKey);
    t.equal(await mcpStatus(b.base, token), 200, 'the token works on B (its answer now cached there)');
    t.equal(await mcpStatus(b.base, token), 200, 'and again');
    t.equal(await mcpStatus(b.base, other), 200, "another key's token works on B");
    t.same(await revokeApiKey(db, record._id), { revoked: 1, ambiguous: false }, 'the key revoked by this process (neither A nor B)');
    t.equal(await mcpStatus(b.base, token), 401, 'B refuses the token on its next request');
    t.equal(await mcpStatus(a.base, token), 401, 'and so does A');
    t.equal(await mcpStatus(b.base, other), 200, "the other key's token still works");
  });

  t.test('a token revoked at instance A: refused on instance B at once', async (t) => {
    const { key } = await createApiKey(db, TENANT, 'agent 2', ['read']);
    const { token, clientId } = await tokenFor(key);
    t.equal(await mcpStatus(b.base, token), 200, 'the token works on B');
    const revoked = await fetch(`${issuer}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: clientId }),
    });
    t.equal(revoked.status, 200, 'revoked at A (RFC 7009)');
    await revoked.body?.cancel();
    t.equal(await mcpStatus(b.base, token), 401, 'B refuses it on its next request');
  });
}
