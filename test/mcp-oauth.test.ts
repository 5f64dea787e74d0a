/**
 * OAuth 2.1 for MCP (issue 40; docs/mcp.md, "Hosted clients: OAuth"), driven as a hosted client
 * drives it: the MCP TypeScript SDK's OAuth client support (`authProvider`) meets the 401's
 * challenge, reads the protected resource metadata, discovers the authorization server, registers
 * dynamically, and opens the consent page, which headless Chromium (as in
 * test/swagger-ui-browser.test.ts) fills with a tenant's API key and scopes; the SDK exchanges the
 * code (PKCE S256, resource indicator) and calls tools with the token. Then refresh, revocation,
 * tenant isolation, a read-scoped token refused a write tool exactly as a read-only key is, a token
 * for another resource refused, the metadata checked field by field against RFC 9728 and RFC 8414,
 * and the MCP Python SDK with a token. A client ID metadata document (an https client id) is served
 * by a local HTTPS server whose self-signed certificate the service trusts through
 * OAUTH_CLIENT_METADATA_CA, its origin allowed by OAUTH_CLIENT_METADATA_PRIVATE_ORIGINS; other
 * private origins are refused without a fetch.
 */
import t, { type Test } from 'tap';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { createServer as createHttpsServer } from 'node:https';
import { createServer } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { refreshAuthorization, UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startHarness, testConfig, KEY_A, KEY_B, TENANT_A, TENANT_B } from './helpers/harness.ts';
import { buildApp } from '../handlers/app.ts';
import { oauthRecordId, oauthRecords } from '../lib/auth/oauth-records-repo.ts';
import { errorProblem } from './helpers/error-reason.ts';
import { seedTwoTenants } from './helpers/mcp.ts';
import { createApiKey, revokeApiKey } from '../lib/auth/api-keys.ts';
import { COLLECTIONS } from '../lib/db/collections.ts';
import { ROOT } from './helpers/service.ts';
import { selfSignedCertificate } from './helpers/self-signed-cert.ts';

t.setTimeout(300_000);
const run = promisify(execFile);

const executablePath = await run(process.execPath, [path.join(ROOT, 'scripts', 'setup-chromium.mjs'), '--check', '--print-path'], { timeout: 60_000 }).then(
  (r) => r.stdout.trim().split('\n').pop()!,
  (err: Error & { stdout?: string; stderr?: string }) => {
    throw new Error(`headless Chromium is required: run \`node scripts/setup-chromium.mjs\` (npm run setup:chromium).\n${err.stderr ?? ''}${err.stdout ?? ''}`);
  },
);

/** A free loopback port: the issuer (the MCP URL's base) is configuration, so the port is known before the app is built. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Client ID metadata documents, served over HTTPS with a certificate made here: `documents` maps a
 * path to its JSON, `fetched` counts the requests per path (a refused client id is never fetched).
 * Two servers: the first origin is allowed to the service, the second is not.
 */
const documents = new Map<string, Record<string, unknown>>();
const fetched = new Map<string, number>();
const tls = selfSignedCertificate(['127.0.0.1', 'localhost']);
const metadataServers = [0, 1].map(() =>
  createHttpsServer({ cert: tls.cert, key: tls.key }, (req, res) => {
    const key = `${req.socket.localPort}${req.url}`;
    fetched.set(key, (fetched.get(key) ?? 0) + 1);
    const doc = documents.get(req.url ?? '');
    if (!doc) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(JSON.stringify(doc));
  }),
);
for (const server of metadataServers) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
}
const [allowedPort, unlistedPort] = metadataServers.map((s) => (s.address() as { port: number }).port) as [number, number];
const ALLOWED_ORIGIN = `https://127.0.0.1:${allowedPort}`;
const caDir = await mkdtemp(path.join(os.tmpdir(), 'oauth-ca-'));
await writeFile(path.join(caDir, 'ca.pem'), tls.cert);
t.teardown(() => rm(caDir, { recursive: true, force: true }));

const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const MCP_URL = `${base}/mcp`;
const h = await startHarness(t, {
  env: {
    OAUTH_ISSUER: base,
    OAUTH_ACCESS_TOKEN_TTL_S: '600',
    OAUTH_CLIENT_METADATA_PRIVATE_ORIGINS: ALLOWED_ORIGIN,
    OAUTH_CLIENT_METADATA_CA: path.join(caDir, 'ca.pem'),
    // The flows below register many clients from this one address (the budget itself: its own app, further down).
    OAUTH_REGISTRATIONS_PER_HOUR: '1000',
  },
});
await seedTwoTenants(h.db);
await h.app.listen({ port, host: '127.0.0.1' });

const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
t.teardown(() => browser.close());
const artifacts = path.join(ROOT, '.cache', 'artifacts');
await mkdir(artifacts, { recursive: true });

/** Where the client's authorization answer goes: a loopback listener, as a native MCP client runs one (the last answer it got is kept). */
let lastAnswer: URL | undefined;
const receiver = createHttpServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (url.pathname === '/oauth/callback') lastAnswer = url;
  res.writeHead(200, { 'content-type': 'text/plain' }).end('authorized');
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
t.teardown(() => receiver.close());
const REDIRECT = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/oauth/callback`;
const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

interface Consent {
  apiKey: string;
  scopes: string[];
  /** Keys tried first, each expected to be refused on the page with this text. */
  refusals?: { apiKey: string; scopes: string[]; says: RegExp; status: number }[];
}

/** The carrier's side: the consent page in Chromium, filled and submitted; answers the code the redirect carries. */
async function consentInBrowser(t: Test, url: URL, consent: Consent, screenshot?: string): Promise<string> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    const external: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(base) && !r.url().startsWith(REDIRECT)) external.push(r.url());
    });
    lastAnswer = undefined;
    await page.goto(url.href);
    t.match(await page.locator('h1').textContent(), /Authorize an MCP client/, 'the consent page opens');
    t.match(await page.textContent('body'), /tap OAuth client/, 'it names the client that asks');
    const submit = async (apiKey: string, scopes: string[]) => {
      await page.fill('input[name=api_key]', apiKey);
      for (const scope of ['read', 'write']) await page.setChecked(`input[name=scope][value=${scope}]`, scopes.includes(scope));
      return Promise.all([page.waitForNavigation(), page.click('button[value=approve]')]).then(([response]) => response);
    };
    for (const refusal of consent.refusals ?? []) {
      const response = await submit(refusal.apiKey, refusal.scopes);
      t.equal(response?.status(), refusal.status, `refused with ${refusal.status}`);
      t.match(await page.locator('.error').textContent(), refusal.says, 'the page says why');
    }
    if (screenshot) await page.screenshot({ path: path.join(artifacts, screenshot), fullPage: true });
    await submit(consent.apiKey, consent.scopes);
    t.same(external, [], 'the page loads nothing from elsewhere');
    const answer = lastAnswer as URL | undefined;
    if (!answer) throw new Error(`no redirect to the client; page: ${(await page.textContent('body'))?.slice(0, 500)}`);
    t.equal(answer.searchParams.get('iss'), base, 'the answer names the issuer (RFC 9207)');
    const code = answer.searchParams.get('code');
    if (!code) throw new Error(`no code in ${answer.href}`);
    return code;
  } finally {
    await context.close();
  }
}

/** The MCP client's OAuth state, in memory: what the SDK asks a host application to keep. */
class TestOAuthProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = '';
  code?: string;
  authorizationUrl?: URL;
  constructor(
    private readonly t: Test,
    /** What the carrier does on the consent page (changed between two authorizations of one client). */
    public consent: Consent,
    /** A client ID metadata document's URL: the SDK uses it as client id instead of registering. */
    readonly clientMetadataUrl?: string,
    /** Registered for refresh tokens (a client without them re-authorizes where one with them refreshes). */
    private readonly refresh = true,
  ) {}
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'tap OAuth client',
      redirect_uris: [REDIRECT],
      grant_types: this.refresh ? ['authorization_code', 'refresh_token'] : ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  async redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
    this.code = await consentInBrowser(this.t, url, this.consent, this.consent.refusals ? 'oauth-consent-refused.png' : undefined);
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** The whole flow through the SDK: 401 → discovery → registration → consent → code → token; answers a connected client. */
async function authorize(
  t: Test,
  consent: Consent,
  query = '',
  provider = new TestOAuthProvider(t, consent),
): Promise<{ provider: TestOAuthProvider; client: Client; transport: StreamableHTTPClientTransport }> {
  const first = new Client({ name: 'tap-oauth', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`/mcp${query}`, base), { authProvider: provider });
  const refused = await first.connect(transport).then(
    () => null,
    (err: unknown) => err,
  );
  t.ok(refused instanceof UnauthorizedError, 'without a token the SDK is sent to authorize');
  t.ok(provider.client?.client_id, `registered dynamically: ${provider.client?.client_id}`);
  t.ok(provider.code, 'the consent answered a code');
  await transport.finishAuth(provider.code!);
  t.ok(provider.saved?.access_token, 'the code was exchanged for an access token');
  const client = new Client({ name: 'tap-oauth', version: '1.0.0' });
  const connected = new StreamableHTTPClientTransport(new URL(`/mcp${query}`, base), { authProvider: provider });
  await client.connect(connected);
  t.teardown(() => client.close().catch(() => undefined));
  return { provider, client, transport: connected };
}

const structured = (r: unknown) =>
  (r as CallToolResult).structuredContent as { data?: { id: string; company: string }[]; error?: { code: number; message: string; details: string[] } };

async function restIds(key: string): Promise<string[]> {
  const res = await h.app.inject({ method: 'GET', url: '/api/financial-docs?limit=10', headers: { 'x-api-key': key } });
  return res
    .json<{ data: { id: string }[] }>()
    .data.map((d) => d.id)
    .sort();
}

/** An MCP client with a bearer token and no OAuth support of its own. */
async function withBearer(token: string, kind: 'streamable' | 'sse' = 'streamable', query = ''): Promise<Client> {
  const client = new Client({ name: 'tap-bearer', version: '1.0.0' });
  const headers = { authorization: `Bearer ${token}` };
  await client.connect(
    kind === 'streamable'
      ? new StreamableHTTPClientTransport(new URL(`/mcp${query}`, base), { requestInit: { headers } })
      : new SSEClientTransport(new URL(`/sse${query}`, base), { requestInit: { headers } }),
  );
  return client;
}

const mcpPost = (token: string) =>
  fetch(MCP_URL, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
    }),
  });

t.test('metadata: RFC 9728 protected resource, RFC 8414 authorization server, and the 401 that announces them', async (t) => {
  for (const [url, resource] of [
    [`${base}/.well-known/oauth-protected-resource/mcp`, MCP_URL],
    [`${base}/.well-known/oauth-protected-resource`, MCP_URL],
    [`${base}/.well-known/oauth-protected-resource/sse`, `${base}/sse`],
  ] as const) {
    const res = await fetch(url);
    t.equal(res.status, 200, url);
    t.match(res.headers.get('content-type'), /^application\/json/, 'RFC 9728 §3.2: JSON');
    const doc = (await res.json()) as Record<string, unknown>;
    t.equal(doc.resource, resource, 'RFC 9728 §2 resource (REQUIRED): the MCP URL the metadata is for (§3.3: matches the URL it was derived from)');
    t.same(doc.authorization_servers, [base], 'authorization_servers: this service (the MCP spec: MUST list at least one)');
    t.same(doc.scopes_supported, ['read', 'write'], 'scopes_supported: what an API key may do');
    t.same(doc.bearer_methods_supported, ['header'], 'bearer_methods_supported: the Authorization header only (tokens never in a URL)');
  }
  const as = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
  t.equal(as.issuer, base, 'RFC 8414 §3.3: issuer identical to the one the metadata URL was built from');
  t.equal(as.authorization_endpoint, `${base}/oauth/authorize`, 'authorization_endpoint (REQUIRED)');
  t.equal(as.token_endpoint, `${base}/oauth/token`, 'token_endpoint (REQUIRED)');
  t.equal(as.registration_endpoint, `${base}/oauth/register`, 'registration_endpoint: dynamic client registration (RFC 7591)');
  t.equal(as.revocation_endpoint, `${base}/oauth/revoke`, 'revocation_endpoint (RFC 7009)');
  t.same(as.response_types_supported, ['code'], 'response_types_supported (REQUIRED): the code flow only (OAuth 2.1)');
  t.same(as.code_challenge_methods_supported, ['S256'], 'PKCE S256 only');
  t.same(
    (as.grant_types_supported as string[]).filter((g) => g !== 'authorization_code' && g !== 'refresh_token'),
    [],
    'grant types: authorization code and refresh token only (no implicit)',
  );
  t.ok((as.scopes_supported as string[]).includes('read') && (as.scopes_supported as string[]).includes('write'), 'scopes_supported lists read and write');
  t.ok((as.token_endpoint_auth_methods_supported as string[]).includes('none'), 'public clients (PKCE) may register');
  t.equal(as.client_id_metadata_document_supported, true, 'client ID metadata documents (the MCP spec: SHOULD)');
  t.equal(as.authorization_response_iss_parameter_supported, true, 'RFC 9207 iss in the authorization response');
  const oidc = (await (await fetch(`${base}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  t.equal(oidc.issuer, base, 'OpenID discovery: the same issuer');
  t.equal(oidc.token_endpoint, as.token_endpoint, 'and the same endpoints');
  // A Host of the client's choosing changes nothing the server publishes.
  const poisoned = await h.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers: { host: 'evil.example' } });
  t.equal(poisoned.json<{ token_endpoint: string }>().token_endpoint, `${base}/oauth/token`, 'URLs come from the issuer, never the Host header');

  for (const [p, init, metadata] of [
    ['/mcp', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }, `${base}/.well-known/oauth-protected-resource/mcp`],
    ['/sse', { method: 'GET', headers: { accept: 'text/event-stream' } }, `${base}/.well-known/oauth-protected-resource/sse`],
  ] as const) {
    const res = await fetch(`${base}${p}`, init);
    t.equal(res.status, 401, `${p} without a credential`);
    t.match(res.headers.get('www-authenticate'), `resource_metadata="${metadata}"`, `${p}: the challenge names its metadata (RFC 9728 §5.1)`);
    t.match(res.headers.get('www-authenticate'), 'scope="read write"', 'and the scopes (the MCP spec: SHOULD)');
  }
});

let tokenB = '';
let providerA: TestOAuthProvider | undefined;

t.test('the whole flow with the TypeScript SDK: registration, consent in Chromium, token, tool call, refresh, revocation', async (t) => {
  const { provider, client } = await authorize(t, {
    apiKey: KEY_A,
    scopes: ['read', 'write'],
    refusals: [{ apiKey: 'not_a_key_of_anyone_000000', scopes: ['read'], says: /Unknown or revoked API key/, status: 401 }],
  });
  providerA = provider;
  const auth = provider.authorizationUrl!;
  t.equal(auth.searchParams.get('code_challenge_method'), 'S256', 'the SDK sent a PKCE S256 challenge');
  t.equal(auth.searchParams.get('resource'), MCP_URL, 'and the resource indicator: the MCP URL');
  const tokens = provider.saved!;
  t.equal(tokens.token_type.toLowerCase(), 'bearer');
  t.equal(tokens.expires_in, 600, 'the access token expires (OAUTH_ACCESS_TOKEN_TTL_S)');
  t.equal(tokens.scope, 'read write', 'with the scopes the carrier granted');
  t.ok(tokens.refresh_token, 'and a refresh token');
  const tokenA = tokens.access_token;

  const listed = structured(await client.callTool({ name: 'listFinancialDocs', arguments: { limit: 10 } }));
  t.same(listed.data!.map((d) => d.id).sort(), await restIds(KEY_A), "a tool call answers what REST answers tenant A's key");
  t.ok(listed.data!.length > 0 && listed.data!.every((d) => d.company === TENANT_A), "tenant A's documents only");

  // Stored hashed: the database holds neither the token nor the refresh token.
  const stored = await h.db.collection<{ _id: string; kind: string; expiresAt: Date | null }>(COLLECTIONS.oauthRecords).find({}).toArray();
  const text = JSON.stringify(stored);
  t.notOk(text.includes(tokens.access_token), 'the access token is nowhere in the database');
  t.notOk(text.includes(tokens.refresh_token!), 'nor the refresh token');
  t.ok(
    stored.some((r) => r._id === `AccessToken:${sha256(tokens.access_token)}`),
    'the token is stored under the SHA-256 of its value',
  );
  t.ok(
    stored.some((r) => r._id === `RefreshToken:${sha256(tokens.refresh_token!)}`),
    'and so is the refresh token',
  );
  // A client and its registration access token (RFC 7592) last as long as the client; everything else expires.
  t.same(
    [...new Set(stored.filter((r) => !(r.expiresAt instanceof Date)).map((r) => r.kind))].sort(),
    ['Client', 'RegistrationAccessToken'],
    'every code, token, grant and session expires (TTL index on expiresAt)',
  );

  // REST is not the resource the token was issued for: API keys only there.
  const rest = await h.app.inject({ method: 'GET', url: '/api/financial-docs', headers: { authorization: `Bearer ${tokenA}` } });
  t.equal(rest.statusCode, 401, 'REST refuses the access token');

  // Refresh: a new access token, the refresh token rotated, the old one spent.
  const metadata = {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    response_types_supported: ['code'],
  };
  const refreshed = await refreshAuthorization(base, {
    metadata,
    clientInformation: provider.client!,
    refreshToken: tokens.refresh_token!,
    resource: new URL(MCP_URL),
  });
  t.not(refreshed.access_token, tokens.access_token, 'refresh answers a new access token');
  t.ok(refreshed.refresh_token && refreshed.refresh_token !== tokens.refresh_token, 'and rotates the refresh token (public client: OAuth 2.1 §4.3.1)');
  t.equal(refreshed.scope, 'read write', 'with the same scopes');
  const again = await withBearer(refreshed.access_token);
  t.same(
    structured(await again.callTool({ name: 'listFinancialDocs', arguments: { limit: 10 } }))
      .data!.map((d) => d.id)
      .sort(),
    await restIds(KEY_A),
  );
  await again.close();
  const replay = await refreshAuthorization(base, {
    metadata,
    clientInformation: provider.client!,
    refreshToken: tokens.refresh_token!,
    resource: new URL(MCP_URL),
  }).then(
    () => 'accepted',
    (err: Error) => err.message,
  );
  t.not(replay, 'accepted', `the spent refresh token is refused: ${replay}`);
  // Its reuse revokes the grant (OAuth 2.1 §4.3.1): the tokens issued under it stop working too.
  t.equal((await mcpPost(tokenA)).status, 401, 'a refresh token replayed revokes its grant: the first access token is refused');

  // Revocation (RFC 7009): the token stops working at once.
  const revoke = await fetch(`${base}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: refreshed.access_token, client_id: provider.client!.client_id }),
  });
  t.equal(revoke.status, 200, 'revocation answers 200');
  const after = await mcpPost(refreshed.access_token);
  t.equal(after.status, 401, 'a revoked token gets 401');
  t.match(after.headers.get('www-authenticate'), /error="invalid_token"/, 'with invalid_token');
  await client.close();
});

t.test('a token of tenant B sees only B; over SSE too', async (t) => {
  const { client, provider } = await authorize(t, { apiKey: KEY_B, scopes: ['read'] });
  tokenB = provider.saved!.access_token;
  const listed = structured(await client.callTool({ name: 'listFinancialDocs', arguments: { limit: 10 } }));
  const bIds = await restIds(KEY_B);
  t.same(listed.data!.map((d) => d.id).sort(), bIds, "what REST answers tenant B's key");
  t.ok(
    listed.data!.every((d) => d.company === TENANT_B),
    "B's documents only",
  );
  const aIds = await restIds(KEY_A);
  t.same(
    bIds.filter((id) => aIds.includes(id) && listed.data!.find((d) => d.id === id)?.company !== TENANT_B),
    [],
    "none of A's",
  );
  const sse = await withBearer(provider.saved!.access_token, 'sse');
  t.same(
    structured(await sse.callTool({ name: 'listFinancialDocs', arguments: { limit: 10 } }))
      .data!.map((d) => d.id)
      .sort(),
    bIds,
    'the same token on /sse',
  );
  await sse.close();
});

/** A JSON-RPC message posted to /mcp with a credential (and a session), as raw HTTP. */
const rpc = (credential: { authorization: string } | { 'x-api-key': string }, message: unknown, sessionId?: string, query = '') =>
  fetch(`${MCP_URL}${query}`, {
    method: 'POST',
    headers: {
      ...credential,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(sessionId ? { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' } : {}),
    },
    body: JSON.stringify(message),
  });

/** A session opened by raw HTTP: its id. */
async function rawSession(credential: { authorization: string } | { 'x-api-key': string }, query = ''): Promise<string> {
  const res = await rpc(
    credential,
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } },
    undefined,
    query,
  );
  await res.body?.cancel();
  const id = res.headers.get('mcp-session-id');
  if (!id) throw new Error(`no session: ${res.status}`);
  await (await rpc(credential, { jsonrpc: '2.0', method: 'notifications/initialized' }, id, query)).body?.cancel();
  return id;
}

const CHALLENGE = `Bearer realm="freight", error="insufficient_scope", scope="read write", resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`;

t.test('a read token calling a write tool: HTTP 403 insufficient_scope; the SDK steps up through the consent page and the call runs', async (t) => {
  // A client without refresh tokens: with one, the SDK 1.32 refreshes on the challenge (same scopes) instead of asking the carrier.
  const provider = new TestOAuthProvider(t, { apiKey: KEY_A, scopes: ['read'] }, undefined, false);
  const { client, transport } = await authorize(t, provider.consent, '?toolsets=all', provider);
  t.equal(provider.saved?.scope, 'read', 'a read token (its key, tenant A, may write)');
  const { tools } = await client.listTools();
  // Cancelling an alert job changes data: the scope is checked before the arguments.
  const write = tools.find((tool) => tool.name === 'cancelAlertJob');
  t.ok(write && write.annotations?.readOnlyHint !== true, 'cancelAlertJob is a write tool');

  // Raw HTTP: what the spec's "Scope Challenge Handling" says.
  const bearer = { authorization: `Bearer ${provider.saved!.access_token}` };
  const session = await rawSession(bearer, '?toolsets=all');
  const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'cancelAlertJob', arguments: { id: 'no-such-job' } } };
  const res = await rpc(bearer, call, session, '?toolsets=all');
  t.equal(res.status, 403, 'HTTP 403 (RFC 6750 §3.1)');
  const challenge = res.headers.get('www-authenticate') ?? '';
  t.equal(
    challenge.slice(0, CHALLENGE.length),
    CHALLENGE,
    'Bearer error="insufficient_scope", the scopes to ask for (held and needed) and the resource metadata',
  );
  t.match(challenge, /error_description="cancelAlertJob needs the 'write' scope/, 'and a description');
  const answer = (await res.json()) as { jsonrpc: string; id: number; error: { code: number; message: string; data: { error: { code: number } } } };
  t.equal(answer.jsonrpc, '2.0', 'the body is a JSON-RPC response');
  t.equal(answer.id, 7, 'to the request refused');
  t.equal(answer.error.code, -32003, 'an error (implementation-defined server error)');
  t.match(answer.error.message, /cancelAlertJob needs the 'write' scope/);
  t.equal(answer.error.data.error.code, 403, 'carrying the REST refusal');
  const batch = await rpc(bearer, [call, { ...call, id: 8, params: { name: 'listFinancialDocs', arguments: { limit: 1 } } }], session, '?toolsets=all');
  t.equal(batch.status, 403, 'a batch holding one such call is refused whole');
  t.same(
    ((await batch.json()) as { id: number }[]).map((m) => m.id),
    [7, 8],
    'with an error for each of its requests (none ran)',
  );
  const read = await rpc(bearer, { ...call, params: { name: 'listFinancialDocs', arguments: { limit: 1 } } }, session, '?toolsets=all');
  t.equal(read.status, 200, 'a read tool with the same token runs');
  await read.body?.cancel();

  // The SDK meets the 403, asks the carrier for "read write" on the consent page, and gets a new token.
  provider.consent = { apiKey: KEY_A, scopes: ['read', 'write'] };
  const stepUp = await client.callTool({ name: 'cancelAlertJob', arguments: { id: 'no-such-job' } }).then(
    () => null,
    (err: unknown) => err,
  );
  t.ok(stepUp instanceof UnauthorizedError, 'the SDK was sent to authorize again');
  t.equal(provider.authorizationUrl?.searchParams.get('scope'), 'read write', 'for the scopes the challenge named');
  await transport.finishAuth(provider.code!);
  t.equal(provider.saved?.scope, 'read write', 'the new token has write');
  const retried = (await client.callTool({ name: 'cancelAlertJob', arguments: { id: 'no-such-job' } })) as CallToolResult;
  // 'no-such-job' is not a job id: the call now gets past the scope check to the id's validation.
  t.equal(structured(retried).error?.code, 400, 'the retried call runs: its id is checked (400), no longer refused for its scope (403)');
});

t.test('a read-only API key gets the same 403 challenge; the SDK without OAuth reports it', async (t) => {
  const { key: readOnlyKey } = await createApiKey(h.db, TENANT_A, 'read-only', ['read']);
  const session = await rawSession({ 'x-api-key': readOnlyKey }, '?toolsets=all');
  const res = await rpc(
    { 'x-api-key': readOnlyKey },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'cancelAlertJob', arguments: { id: 'no-such-job' } } },
    session,
    '?toolsets=all',
  );
  t.equal(res.status, 403);
  t.equal((res.headers.get('www-authenticate') ?? '').slice(0, CHALLENGE.length), CHALLENGE, 'the challenge (a key holding read, the call needing write)');
  await res.body?.cancel();
  const byKey = new Client({ name: 'tap-key', version: '1.0.0' });
  await byKey.connect(new StreamableHTTPClientTransport(new URL('/mcp?toolsets=all', base), { requestInit: { headers: { 'x-api-key': readOnlyKey } } }));
  const err = await byKey.callTool({ name: 'cancelAlertJob', arguments: { id: 'no-such-job' } }).then(
    () => null,
    (e: unknown) => e as Error & { code?: number },
  );
  t.equal(err?.code, 403, 'the SDK client reports HTTP 403');
  t.match(err?.message, /cancelAlertJob needs the 'write' scope/, 'with the JSON-RPC error text');
  const still = structured(await byKey.callTool({ name: 'listFinancialDocs', arguments: { limit: 10 } }));
  t.same(still.data!.map((d) => d.id).sort(), await restIds(KEY_A), 'the session goes on: a read tool runs');
  await byKey.close();
  // The legacy SSE transport: the same challenge on POST /messages.
  const sse = new Client({ name: 'tap-key-sse', version: '1.0.0' });
  await sse.connect(new SSEClientTransport(new URL('/sse?toolsets=all', base), { requestInit: { headers: { 'x-api-key': readOnlyKey } } }));
  const sseErr = await sse.callTool({ name: 'cancelAlertJob', arguments: { id: 'no-such-job' } }).then(
    () => null,
    (e: unknown) => e as Error,
  );
  t.match(sseErr?.message, /403/, 'refused with 403 on /messages too');
  await sse.close();
});

t.test('a token bound to another resource is refused; none is issued for one', async (t) => {
  const records = h.db.collection<{ _id: string; kind: string; payload: string; expiresAt: Date }>(COLLECTIONS.oauthRecords);
  const real = await records.findOne({ _id: `AccessToken:${sha256(tokenB)}` });
  t.ok(real, "tenant B's token is stored");
  // Two copies of that token's record under new ids: one for this server's MCP URL, one for another resource.
  const forge = async (id: string, aud: string) => {
    const payload = { ...(JSON.parse(real!.payload) as Record<string, unknown>), aud };
    await records.insertOne({ ...real!, _id: `AccessToken:${sha256(id)}`, payload: JSON.stringify(payload) });
  };
  const same = 'S'.repeat(43);
  const other = 'O'.repeat(43);
  await forge(same, MCP_URL);
  await forge(other, 'https://other.example/mcp');
  t.equal((await mcpPost(same)).status, 200, 'the copy for this MCP URL is accepted (the control)');
  const refused = await mcpPost(other);
  t.equal(refused.status, 401, 'the copy for another resource is refused (RFC 8707 audience)');
  t.match(refused.headers.get('www-authenticate'), /error="invalid_token"/);

  // The authorization server issues none for another resource (invalid_target).
  const url = new URL(providerA!.authorizationUrl!.href);
  url.searchParams.set('resource', 'https://other.example/mcp');
  const answer = await fetch(url, { redirect: 'manual' });
  const location = new URL(answer.headers.get('location') ?? `${base}/`, base);
  t.equal(location.searchParams.get('error'), 'invalid_target', 'an authorization request for another resource answers invalid_target');
});

t.test('the consent form cannot be posted from elsewhere (no interaction cookie: no consent)', async (t) => {
  const res = await fetch(`${base}/oauth/interaction/abc`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ api_key: KEY_A, scope: 'read', decision: 'approve' }),
    redirect: 'manual',
  });
  t.equal(res.status, 400);
  t.match(res.headers.get('content-security-policy'), /default-src 'none'/);
  t.match(await res.text(), /expired, or was opened in another browser/);
});

t.test('revoking the API key revokes its tokens', async (t) => {
  const { key, record } = await createApiKey(h.db, TENANT_B, 'to revoke', ['read']);
  const { provider } = await authorize(t, { apiKey: key, scopes: ['read'] });
  t.equal((await mcpPost(provider.saved!.access_token)).status, 200, 'the token works');
  t.same(await revokeApiKey(h.db, record._id), { revoked: 1, ambiguous: false });
  t.equal((await mcpPost(provider.saved!.access_token)).status, 401, 'not once its key is revoked');
});

t.test('the MCP Python SDK connects with a token, lists and calls a tool', async (t) => {
  await run(process.execPath, [path.join(ROOT, 'scripts', 'setup-venv.mjs'), '--check'], { cwd: ROOT, timeout: 60_000 });
  const { provider } = await authorize(t, { apiKey: KEY_B, scopes: ['read'] });
  const python = path.join(ROOT, '.venv', 'bin', 'python');
  const { stdout } = await run(python, [path.join(ROOT, 'test', 'contract', 'mcp_python_oauth_client.py'), MCP_URL, provider.saved!.access_token], {
    cwd: ROOT,
    timeout: 120_000,
  });
  const report = JSON.parse(stdout.trim().split('\n').pop()!) as { server: string; tools: string[]; isError: boolean; companies: string[]; ids: string[] };
  t.equal(report.server, 'freight-backoffice');
  t.ok(report.tools.includes('listFinancialDocs'), `${report.tools.length} tools listed`);
  t.equal(report.isError, false);
  t.same(report.companies, [TENANT_B], "tenant B's documents");
  t.same(report.ids, await restIds(KEY_B), 'what REST answers B');
});

t.test('the consent page escapes what a client registered, and a denial answers access_denied', async (t) => {
  const name = '<script>alert("x")</script> & co';
  const registration = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', grant_types: ['authorization_code'] }),
  });
  t.equal(registration.status, 201, 'registered (RFC 7591 §3.2.1: 201)');
  const { client_id } = (await registration.json()) as { client_id: string };
  const url = new URL(`${base}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    client_id,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'read',
    resource: MCP_URL,
    // RFC 7636 Appendix B's example verifier's challenge.
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    state: 'st1',
  }))
    url.searchParams.set(k, v);
  const context = await browser.newContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  lastAnswer = undefined;
  const response = await page.goto(url.href);
  t.equal(response?.status(), 200, 'the consent page');
  const html = (await response?.text()) ?? '';
  t.notOk(html.includes('<script>alert'), 'the client name is not markup');
  t.match(await page.locator('strong').first().textContent(), name, 'it is shown as text');
  t.equal(await page.isChecked('input[name=scope][value=read]'), true, 'read ticked: asked for');
  t.equal(await page.isChecked('input[name=scope][value=write]'), false, 'write not ticked: not asked for');
  await Promise.all([page.waitForURL((u) => u.href.startsWith(REDIRECT)), page.click('button[value=deny]')]);
  const answer = lastAnswer as URL | undefined;
  t.equal(answer?.searchParams.get('error'), 'access_denied', 'the client hears access_denied');
  t.equal(answer?.searchParams.get('state'), 'st1', 'with its state');
  t.notOk(answer?.searchParams.get('code'), 'and no code');
});

/** An authorization request of `clientId` as a browser would open it (PKCE challenge: RFC 7636 Appendix B's). */
function authorizationUrl(clientId: string, state = 'st'): URL {
  const url = new URL(`${base}/oauth/authorize`);
  for (const [k, v] of Object.entries({
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'read',
    resource: MCP_URL,
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
    state,
  }))
    url.searchParams.set(k, v);
  return url;
}

const clientDocument = (clientId: string, extra: Record<string, unknown> = {}) => ({
  client_id: clientId,
  client_name: 'tap OAuth client (metadata document)',
  redirect_uris: [REDIRECT],
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  ...extra,
});

t.test('a client ID metadata document: the SDK uses its https URL as client id, the server fetches it, consent, token, tool call', async (t) => {
  const clientId = `${ALLOWED_ORIGIN}/clients/tap.json`;
  documents.set('/clients/tap.json', clientDocument(clientId));
  const registered = await h.db.collection(COLLECTIONS.oauthRecords).countDocuments({ kind: 'Client' });
  const provider = new TestOAuthProvider(t, { apiKey: KEY_A, scopes: ['read'] }, clientId);
  const first = new Client({ name: 'tap-cimd', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: provider });
  const refused = await first.connect(transport).then(
    () => null,
    (err: unknown) => err,
  );
  t.ok(refused instanceof UnauthorizedError, 'without a token the SDK is sent to authorize');
  t.equal(provider.client?.client_id, clientId, 'the SDK used the document URL as its client id (the server announces client_id_metadata_document_supported)');
  t.equal(provider.authorizationUrl?.searchParams.get('client_id'), clientId, 'and sent it in the authorization request');
  t.ok(
    (fetched.get(`${allowedPort}/clients/tap.json`) ?? 0) >= 1,
    'the server fetched the document over HTTPS (a certificate trusted through OAUTH_CLIENT_METADATA_CA)',
  );
  t.equal(await h.db.collection(COLLECTIONS.oauthRecords).countDocuments({ kind: 'Client' }), registered, 'nothing was registered dynamically');
  t.ok(provider.code, "the consent page (naming the document's client_name) answered a code");
  await transport.finishAuth(provider.code!);
  t.equal(provider.saved?.scope, 'read', 'the code was exchanged for a token with the scope granted');
  const client = new Client({ name: 'tap-cimd', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(MCP_URL), { authProvider: provider }));
  const listed = structured(await client.callTool({ name: 'listFinancialDocs', arguments: { limit: 10 } }));
  t.same(listed.data!.map((d) => d.id).sort(), await restIds(KEY_A), "a tool call answers what REST answers tenant A's key");
  await client.close();

  // A redirect URI the document does not list is refused (the spec: MUST validate against the document).
  const stray = authorizationUrl(clientId);
  stray.searchParams.set('redirect_uri', 'http://127.0.0.1:9/elsewhere');
  const strayAnswer = await fetch(stray, { redirect: 'manual' });
  t.equal(strayAnswer.status, 400, 'a redirect_uri outside the document: 400, no redirect');
  const strayPage = await strayAnswer.text();
  t.match(strayPage, /redirect_uri/, 'naming the redirect_uri');
  // The error page is the consent pages' own: nothing from elsewhere, no script, no framing.
  t.equal(strayAnswer.headers.get('content-security-policy'), "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'");
  t.equal(strayAnswer.headers.get('x-frame-options'), 'DENY');
  t.match(strayAnswer.headers.get('content-type'), /^text\/html; charset=utf-8/);
  t.notMatch(strayPage, /https?:\/\/(?!127\.0\.0\.1)/, 'no address of another site in the page');
  t.match(strayPage, /<h1>Authorization failed<\/h1>/);
});

t.test('client ID metadata documents are fetched from public names and the allowed origins only; a document must name itself', async (t) => {
  documents.set('/clients/other.json', clientDocument('placeholder'));
  const refusals = [
    ['another port on loopback, not listed', `https://127.0.0.1:${unlistedPort}/clients/other.json`, `${unlistedPort}/clients/other.json`],
    ['localhost, not listed (the same server by name)', `https://localhost:${allowedPort}/clients/other.json`, `${allowedPort}/clients/other.json`],
    ['an IPv6 loopback address', `https://[::1]:${allowedPort}/clients/other.json`, `${allowedPort}/clients/other.json`],
  ] as const;
  for (const [what, clientId, servedAs] of refusals) {
    documents.set('/clients/other.json', clientDocument(clientId));
    const res = await fetch(authorizationUrl(clientId), { redirect: 'manual' });
    t.equal(res.status, 400, `${what}: refused`);
    t.match(await res.text(), /invalid_client/, 'as invalid_client');
    t.equal(fetched.get(servedAs) ?? 0, 0, 'and never fetched');
  }
  // The allowed origin, but a document whose client_id is not its own URL.
  const mismatched = `${ALLOWED_ORIGIN}/clients/mismatch.json`;
  documents.set('/clients/mismatch.json', clientDocument(`${ALLOWED_ORIGIN}/clients/someone-else.json`));
  const res = await fetch(authorizationUrl(mismatched), { redirect: 'manual' });
  t.ok((fetched.get(`${allowedPort}/clients/mismatch.json`) ?? 0) >= 1, 'the allowed origin is fetched');
  t.equal(res.status, 400, 'but a document naming another client_id is refused');
  t.match(await res.text(), /invalid_client/);
});

t.test('a code or a refresh token sent twice at once gives no working token: the reuse revokes the grant (RFC 6749 §4.1.2)', async (t) => {
  const registration = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'tap OAuth client (races)',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    }),
  });
  const { client_id } = (await registration.json()) as { client_id: string };
  // The verifier of authorizationUrl's challenge (RFC 7636 Appendix B).
  const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
  const tokenRequest = async (params: Record<string, string>) => {
    const res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id, ...params }),
    });
    return { status: res.status, body: (await res.json()) as { access_token?: string; refresh_token?: string; error?: string } };
  };
  const exchange = (code: string) => tokenRequest({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier });
  const noneWorks = async (answers: { status: number; body: { access_token?: string; error?: string } }[], what: string) => {
    t.ok(
      answers.some((a) => a.status === 400 && a.body.error === 'invalid_grant'),
      `${what}: answered invalid_grant (${answers.map((a) => a.status).join(', ')})`,
    );
    for (const a of answers.filter((a) => a.status === 200)) t.equal((await mcpPost(a.body.access_token!)).status, 401, `${what}: a token issued is revoked`);
  };

  // One code, four token requests at once: each reads it unused before any marks it used.
  const code = await consentInBrowser(t, authorizationUrl(client_id), { apiKey: KEY_A, scopes: ['read'] });
  await noneWorks(await Promise.all([1, 2, 3, 4].map(() => exchange(code))), 'a code sent four times at once');

  // A refresh token (rotated on use), four refreshes at once.
  const single = await exchange(await consentInBrowser(t, authorizationUrl(client_id), { apiKey: KEY_A, scopes: ['read'] }));
  t.equal(single.status, 200, 'a code used once: tokens');
  const refreshes = await Promise.all([1, 2, 3, 4].map(() => tokenRequest({ grant_type: 'refresh_token', refresh_token: single.body.refresh_token! })));
  await noneWorks(refreshes, 'a refresh token sent four times at once');
  for (const r of refreshes.filter((r) => r.status === 200))
    t.equal((await tokenRequest({ grant_type: 'refresh_token', refresh_token: r.body.refresh_token! })).status, 400, 'no rotated refresh token lives on');
  t.equal((await mcpPost(single.body.access_token!)).status, 401, "the grant's first access token is revoked too");
});

t.test('redirect URIs: https, http on loopback only, or a native app scheme as Cursor registers it (MCP authorization spec; RFC 8252 §7.1)', async (t) => {
  const registerWith = async (metadata: Record<string, unknown>) => {
    const res = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'tap OAuth client',
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
        ...metadata,
      }),
    });
    return { status: res.status, body: (await res.json()) as { client_id?: string; error?: string; application_type?: string } };
  };
  for (const uris of [['http://app.example.com/oauth/callback'], ['https://app.example.com/oauth/callback', 'http://192.168.1.20:8080/callback']]) {
    const refused = await registerWith({ redirect_uris: uris });
    t.equal(refused.status, 400, `${uris.join(' ')}: plain http off loopback is refused`);
    t.equal(refused.body.error, 'invalid_redirect_uri');
  }
  for (const uri of ['javascript:alert(1)', 'data:text/html,x', 'file:///etc/passwd'])
    t.equal((await registerWith({ redirect_uris: [uri] })).body.error, 'invalid_redirect_uri', `${uri.split(':')[0]}: refused`);

  // What Cursor registers (a private-use scheme, as a `web` client).
  const CURSOR = 'cursor://anysphere.cursor-mcp/oauth/callback';
  const cursor = await registerWith({ application_type: 'web', redirect_uris: [CURSOR], response_types: ['code'] });
  t.equal(cursor.status, 201, "Cursor's registration is accepted");
  t.equal(cursor.body.application_type, 'native', 'as a native client');
  const url = authorizationUrl(cursor.body.client_id!);
  url.searchParams.set('redirect_uri', CURSOR);
  const res = await fetch(url, { redirect: 'manual' });
  t.equal(res.status, 303, 'its authorization request goes on');
  t.match(res.headers.get('location'), /\/oauth\/interaction\//, 'to the consent page');
});

t.test('a second authorization in the same browser shows the consent page again: a step-up to write is asked, not answered with read', async (t) => {
  const registration = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'tap OAuth client (same browser)', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  const { client_id } = (await registration.json()) as { client_id: string };
  const context = await browser.newContext();
  t.teardown(() => context.close());
  const page = await context.newPage();
  lastAnswer = undefined;
  await page.goto(authorizationUrl(client_id).href);
  await page.fill('input[name=api_key]', KEY_A);
  await page.setChecked('input[name=scope][value=write]', false);
  await Promise.all([page.waitForURL((u) => u.href.startsWith(REDIRECT)), page.click('button[value=approve]')]);
  t.ok((lastAnswer as URL | undefined)?.searchParams.get('code'), 'the first consent (read) answered a code');

  // The client steps up (a 403 insufficient_scope): the same browser, its session cookie still there.
  lastAnswer = undefined;
  const stepUp = authorizationUrl(client_id, 'st2');
  stepUp.searchParams.set('scope', 'read write');
  const response = await page.goto(stepUp.href);
  t.notOk(lastAnswer, 'no answer went to the client without the carrier');
  t.match(response?.url(), /\/oauth\/interaction\//, 'the consent page');
  t.match(await page.locator('h1').textContent(), /Authorize an MCP client/);
  t.equal(await page.isChecked('input[name=scope][value=write]'), true, 'write ticked: asked for now');
});

t.test(
  "a loopback redirect URI's port is free (RFC 8252 §7.3): Claude Code's metadata document lists none, and it asks with the port it listens on",
  async (t) => {
    // As Claude Code's document (https://claude.ai/oauth/claude-code-client-metadata): loopback URIs without a port, no application_type.
    const clientId = `${ALLOWED_ORIGIN}/clients/portless.json`;
    documents.set(
      '/clients/portless.json',
      clientDocument(clientId, {
        client_name: 'tap OAuth client (portless)',
        redirect_uris: ['http://localhost/oauth/callback', 'http://127.0.0.1/oauth/callback'],
      }),
    );
    const code = await consentInBrowser(t, authorizationUrl(clientId), { apiKey: KEY_A, scopes: ['read'] });
    const res = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: clientId,
        code,
        redirect_uri: REDIRECT,
        code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
      }),
    });
    t.equal(res.status, 200, `the code answered at ${REDIRECT} is exchanged`);

    // Registered dynamically the same way.
    const registration = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'tap OAuth client', redirect_uris: ['http://127.0.0.1/oauth/callback'], token_endpoint_auth_method: 'none' }),
    });
    const { client_id } = (await registration.json()) as { client_id: string };
    const answer = await fetch(authorizationUrl(client_id), { redirect: 'manual' });
    t.equal(answer.status, 303, 'a registered portless loopback URI: the request with a port goes on');
    t.match(answer.headers.get('location'), /\/oauth\/interaction\//);
    // Only the port is free: another path or host is not the registered URI.
    for (const stray of [REDIRECT.replace('/oauth/callback', '/elsewhere'), REDIRECT.replace('127.0.0.1', 'localhost')]) {
      const url = authorizationUrl(client_id);
      url.searchParams.set('redirect_uri', stray);
      t.equal((await fetch(url, { redirect: 'manual' })).status, 400, `${stray}: refused, no redirect`);
    }
  },
);

t.test('no page of the library that loads from elsewhere or may be framed: OpenID logout is off', async (t) => {
  const metadata = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
  t.notOk('end_session_endpoint' in metadata, 'no end_session_endpoint announced');
  const res = await fetch(`${base}/oauth/session/end`);
  t.equal(res.status, 404, 'the logout page is not served');
  t.notMatch(await res.text(), /fonts\.googleapis\.com/);
});

/** A dynamic registration (RFC 7591) by raw HTTP: the status and the answer. */
async function register(metadata: Record<string, unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'tap OAuth client', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', ...metadata }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

t.test('client metadata is bounded: a long name, too many or too long redirect URIs, long free text: 400 invalid_client_metadata', async (t) => {
  const long = (n: number) => 'x'.repeat(n);
  const uri = (n: number) => `https://app.example.com/${'p'.repeat(n - 'https://app.example.com/'.length)}`;
  const many = (n: number) => Array.from({ length: n }, (_, i) => `https://a.example/${i}`);
  for (const [what, metadata] of [
    ['a client_name of 201 characters', { client_name: long(201) }],
    ['a client_name of 50,000 characters (the probe)', { client_name: long(50_000) }],
    ['11 redirect_uris', { redirect_uris: many(11) }],
    ['2,000 redirect_uris (the probe)', { redirect_uris: many(2000) }],
    ['a redirect_uri of 2,001 characters', { redirect_uris: [uri(2001)] }],
    ['a client_uri of 2,001 characters', { client_uri: uri(2001) }],
    ['a logo_uri of 2,001 characters', { logo_uri: uri(2001) }],
    ['a policy_uri of 2,001 characters', { policy_uri: uri(2001) }],
    ['a tos_uri of 2,001 characters', { tos_uri: uri(2001) }],
    ['a software_id of 201 characters', { software_id: long(201) }],
    ['a software_version of 201 characters', { software_version: long(201) }],
    ['11 contacts', { contacts: Array.from({ length: 11 }, (_, i) => `ops${i}@example.com`) }],
    ['a contact of 255 characters', { contacts: [`${long(243)}@example.com`] }],
    [
      'a jwks of 11 keys',
      {
        jwks: {
          keys: Array.from({ length: 11 }, (_, i) => ({
            ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' }),
            kid: String(i),
          })),
        },
      },
    ],
  ] as const) {
    const before = await h.db.collection(COLLECTIONS.oauthRecords).countDocuments({ kind: 'Client' });
    const refused = await register(metadata);
    t.equal(refused.status, 400, `${what}: 400`);
    t.equal(refused.body.error, 'invalid_client_metadata', 'invalid_client_metadata (RFC 7591 §3.2.2)');
    t.match(refused.body.error_description, /at most/, `saying the limit: ${String(refused.body.error_description)}`);
    t.equal(await h.db.collection(COLLECTIONS.oauthRecords).countDocuments({ kind: 'Client' }), before, 'nothing stored');
  }
  const atLimits = await register({
    client_name: long(200),
    redirect_uris: [uri(2000), ...many(8), REDIRECT],
    client_uri: uri(2000),
    software_id: long(200),
    software_version: long(200),
    contacts: Array.from({ length: 10 }, (_, i) => `ops${i}@example.com`),
  });
  t.equal(atLimits.status, 201, 'at every limit: registered');
  t.equal((atLimits.body.redirect_uris as string[]).length, 10, 'with its 10 redirect URIs');
});

t.test('a client registered and never consented expires (24 h); the first consent keeps it and its registration access token', async (t) => {
  const stored = async (clientId: string) => (await oauthRecords(h.db).findOne({ _id: oauthRecordId('Client', clientId) }))?.expiresAt;
  const registered = await register({ client_name: 'tap OAuth client (never consented)' });
  t.equal(registered.status, 201);
  const abandoned = String(registered.body.client_id);
  const expiresAt = await stored(abandoned);
  t.ok(expiresAt instanceof Date, 'stored with an expiry');
  const inHours = ((expiresAt as Date).getTime() - Date.now()) / 3_600_000;
  t.ok(inHours > 23.9 && inHours <= 24, `in 24 hours (${inHours.toFixed(3)})`);
  const token = await oauthRecords(h.db).findOne({ _id: oauthRecordId('RegistrationAccessToken', String(registered.body.registration_access_token)) });
  t.same(token?.expiresAt, expiresAt, 'its registration access token expires with it');
  t.equal((await fetch(authorizationUrl(abandoned), { redirect: 'manual' })).status, 303, 'within the day its authorization request goes on');

  // A day later (the record as the TTL monitor has not removed it yet): unknown.
  await oauthRecords(h.db).updateOne({ _id: oauthRecordId('Client', abandoned) }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
  const late = await fetch(authorizationUrl(abandoned), { redirect: 'manual' });
  t.equal(late.status, 400, 'after its expiry: refused');
  t.equal(late.headers.get('location'), null, 'no redirect');
  t.match(late.headers.get('content-type'), /^text\/html/, 'an error page');
  t.match(await late.text(), /invalid_client/, 'invalid_client');

  // Consented: kept for good, its registration access token too.
  const kept = await register({ client_name: 'tap OAuth client' });
  const clientId = String(kept.body.client_id);
  t.ok((await stored(clientId)) instanceof Date, 'registered: it expires');
  await consentInBrowser(t, authorizationUrl(clientId), { apiKey: KEY_A, scopes: ['read'] });
  t.equal(await stored(clientId), null, 'consented: it no longer expires');
  const keptToken = await oauthRecords(h.db).findOne({ _id: oauthRecordId('RegistrationAccessToken', String(kept.body.registration_access_token)) });
  t.equal(keptToken?.expiresAt, null, 'nor does its registration access token');
  const read = await fetch(String(kept.body.registration_client_uri), { headers: { authorization: `Bearer ${String(kept.body.registration_access_token)}` } });
  t.equal(read.status, 200, 'which still reads the client (RFC 7592)');
  t.equal((await fetch(authorizationUrl(clientId), { redirect: 'manual' })).status, 303, 'and its authorization requests go on');
});

t.test(
  'registrations per client address and hour (OAUTH_REGISTRATIONS_PER_HOUR): the next one is 429 with retry-after; another address is not limited',
  async (t) => {
    const limited = await buildApp({
      config: testConfig({ OAUTH_ISSUER: base, OAUTH_REGISTRATIONS_PER_HOUR: '3', ALERT_WORKER: 'false' }),
      db: h.db,
      logger: false,
    });
    t.teardown(() => limited.close());
    const post = (remoteAddress: string, url = '/oauth/register') =>
      limited.inject({
        method: 'POST',
        url,
        remoteAddress,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ client_name: 'tap OAuth client (budget)', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
      });
    for (let i = 1; i <= 3; i += 1) {
      const res = await post('203.0.113.7');
      t.equal(res.statusCode, 201, `registration ${i} of 3: 201`);
      t.equal(res.headers['x-ratelimit-limit'], '3', 'counted on the registration budget');
    }
    const before = await h.db.collection(COLLECTIONS.oauthRecords).countDocuments({ kind: 'Client' });
    const over = await post('203.0.113.7');
    t.equal(over.statusCode, 429, 'the 4th within the hour: 429');
    const retryAfter = Number(over.headers['retry-after']);
    t.ok(retryAfter > 3500 && retryAfter <= 3600, `retry-after: the rest of the hour (${retryAfter} s)`);
    t.equal(errorProblem(429, over.json()), null, "in the service's error shape");
    t.match(over.json<{ error: { details: string[] } }>().error.details[0], /registration limit of 3 per hour per client address/);
    for (const alias of ['/oauth/register/', '/oauth/REGISTER', '/oauth/Register/'])
      t.not((await post('203.0.113.7', alias)).statusCode, 201, `${alias} is no way round it`);
    t.equal(await h.db.collection(COLLECTIONS.oauthRecords).countDocuments({ kind: 'Client' }), before, 'nothing stored');
    t.equal((await post('198.51.100.23')).statusCode, 201, 'another address: registered');
    const metadata = await limited.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server', remoteAddress: '203.0.113.7' });
    t.equal(metadata.statusCode, 200, 'the spent address still reaches the rest of the server');
  },
);
