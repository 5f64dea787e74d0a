/**
 * The service's OAuth 2.1 authorization server for MCP clients: oidc-provider (panva; OpenID
 * certified, maintained) configured for what the MCP authorization spec (2025-11-25) asks —
 * authorization code with PKCE S256 only, dynamic client registration (RFC 7591), client ID metadata
 * documents (the library's draft support), resource indicators (RFC 8707: a token is issued only for
 * this server's MCP URLs, lib/oauth/resource-urls.ts), refresh tokens rotated on each use, revocation
 * (RFC 7009), and its metadata (served as RFC 8414 and OpenID discovery by lib/oauth/routes.ts).
 *
 * Access tokens are opaque and stored hashed (lib/oauth/mongo-adapter.ts); the account a token is
 * issued to is the API key the carrier authorised with on the consent page (lib/oauth/consent.ts),
 * so the token carries that key's tenant and at most its scopes (lib/auth/access-tokens.ts).
 */
import { generateKeyPairSync } from 'node:crypto';
import type { Db } from 'mongodb';
import Provider, { errors, type ClientMetadata, type Configuration, type JWK, type KoaContextWithOIDC } from 'oidc-provider';
import { serviceSecret, serviceValue } from '../db/service-secrets-repo.ts';
import { apiKeys } from '../auth/api-keys.ts';
import type { OAuthSettings } from '../config.ts';
import { mongoAdapter } from './mongo-adapter.ts';
import { mayFetchClientMetadata } from './client-metadata-fetch.ts';
import { mcpResourceUrl, mcpResourceUrls, OAUTH_SCOPES } from './resource-urls.ts';
import { INTERACTION_PATH, issuerPath } from './server-paths.ts';
import { CONSENT_HEADERS, consentProblemPage } from './consent-page.ts';

/** Where the authorization server's endpoints live, under the issuer. */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  userinfo: '/oauth/userinfo',
  end_session: '/oauth/session/end',
  pushed_authorization_request: '/oauth/par',
} as const;

/** The hosts of a loopback redirect URI (RFC 8252 §7.3), as URL parses them. */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * What a client's redirect URIs may be, beyond oidc-provider's checks (both registration paths, and every time a client is
 * loaded): `https`, or `http` on a loopback address only (the MCP authorization spec: "All redirect URIs MUST be either
 * localhost or use HTTPS"; a code sent over plain http elsewhere can be read on the way); or a native app's private-use
 * scheme (RFC 8252 §7.1).
 *
 * A client with a loopback or private-use redirect URI is a native app (RFC 8252), and is treated as one whatever its
 * `application_type` says (omitted, it is `web`): oidc-provider's `web` rules refuse any scheme but http(s) (Cursor registers
 * `cursor://anysphere.cursor-mcp/oauth/callback` as `web`) and match a loopback URI with its port, where RFC 8252 §7.3 says
 * the port MUST be free (Claude Code's client ID metadata document lists `http://localhost/callback` and
 * `http://127.0.0.1/callback`, and it asks with the port it listens on). Its `native` rules: never `javascript:`, `data:`,
 * `file:` …, http only on loopback, any port there. Not when an `https` URI names a loopback host (no native app's).
 */
function redirectPolicy(metadata: ClientMetadata): void {
  const uris: unknown[] = Array.isArray(metadata.redirect_uris) ? metadata.redirect_uris : [];
  let nativeApp = false;
  let httpsLoopback = false;
  for (const uri of uris) {
    let url: URL;
    try {
      url = new URL(String(uri));
    } catch {
      continue; // oidc-provider refuses it
    }
    const loopback = LOOPBACK_HOSTS.has(url.hostname);
    if (url.protocol === 'http:' && !loopback)
      throw new errors.InvalidClientMetadata('redirect_uris must use https, or http on a loopback address (localhost, 127.0.0.1 or [::1]) only');
    if (url.protocol === 'https:') httpsLoopback ||= loopback;
    else nativeApp = true;
  }
  if (nativeApp && !httpsLoopback) metadata.application_type = 'native';
}

/**
 * How much a client's metadata may hold (RFC 7591 registration is anonymous, and a client is stored): the longest
 * `client_name`, at most MAX_LIST_ITEMS redirect URIs (and contacts …) and every other string, URI or list member at most
 * MAX_TEXT_LENGTH characters; `software_id` and `software_version` as short as a name, a contact as an e-mail address
 * (RFC 5321: 254), a `jwks` of at most 10 keys. Checked on both registration paths and whenever a client is loaded.
 */
export const CLIENT_METADATA_LIMITS = {
  nameLength: 200,
  listItems: 10,
  textLength: 2000,
  contactLength: 254,
  jwksKeys: 10,
  jwksLength: 20_000,
} as const;
const SHORT_TEXT = new Set(['client_name', 'software_id', 'software_version']);

/**
 * The caps above, refused as RFC 7591's `invalid_client_metadata` (oidc-provider answers `invalid_redirect_uri` for a
 * description starting with `redirect_uris`: none here does, a cap is not a URI's fault); a value of the wrong type is left
 * to oidc-provider's checks.
 */
function metadataLimits(metadata: ClientMetadata): void {
  const limits = CLIENT_METADATA_LIMITS;
  const refuse = (detail: string): never => {
    throw new errors.InvalidClientMetadata(detail);
  };
  for (const [key, value] of Object.entries<unknown>(metadata)) {
    if (key === 'jwks') {
      const keys: unknown = value && typeof value === 'object' ? (value as { keys?: unknown }).keys : undefined;
      if (Array.isArray(keys) && keys.length > limits.jwksKeys) refuse(`jwks must hold at most ${limits.jwksKeys} keys`);
      if (value !== undefined && JSON.stringify(value).length > limits.jwksLength) refuse(`jwks must be at most ${limits.jwksLength} characters`);
      continue;
    }
    const max = SHORT_TEXT.has(key) ? limits.nameLength : key === 'contacts' ? limits.contactLength : limits.textLength;
    if (typeof value === 'string' && value.length > max) refuse(`${key} must be at most ${max} characters`);
    if (!Array.isArray(value)) continue;
    if (value.length > limits.listItems) refuse(`at most ${limits.listItems} ${key} are accepted`);
    if (value.some((item) => typeof item === 'string' && item.length > max)) refuse(`each of ${key} must be at most ${max} characters`);
  }
}

/** The signing key of ID tokens (an OpenID client asking for `openid`), made once per database and kept there. */
async function signingKey(db: Db): Promise<JWK> {
  const jwk = await serviceValue(db, 'oauth-signing-jwk', () =>
    JSON.stringify({ ...generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' }), use: 'sig', alg: 'RS256' }),
  );
  return JSON.parse(jwk) as JWK;
}

/** `fetch`: how client ID metadata documents are fetched (lib/oauth/client-metadata-fetch.ts). */
export async function createOAuthProvider(db: Db, settings: OAuthSettings, fetch: typeof globalThis.fetch): Promise<Provider> {
  const { issuer } = settings;
  const resources = mcpResourceUrls(issuer);
  const prefix = issuerPath(issuer);
  const configuration: Configuration = {
    adapter: mongoAdapter(db),
    fetch,
    jwks: { keys: [await signingKey(db)] },
    cookies: { keys: [(await serviceSecret(db, 'oauth-cookie-key')).toString('base64')] },
    routes: OAUTH_ROUTES,
    // The account is the API key the carrier authorised with; a revoked key has no account: no token, no refresh.
    async findAccount(_ctx, sub) {
      const key = await apiKeys(db).findOne({ _id: sub, revokedAt: null }, { projection: { _id: 1 } });
      return key ? { accountId: sub, claims: () => ({ sub }) } : undefined;
    },
    interactions: { url: (_ctx, interaction) => `${prefix}${INTERACTION_PATH}/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      // No OpenID logout: MCP clients never use it, no authorization reuses a browser session (loadExistingGrant below), and
      // the library's pages for it (a logout form, its success page) load a web font from elsewhere and may be framed.
      rpInitiatedLogout: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        // Only public names, unless configured (lib/oauth/client-metadata-fetch.ts): the service must not fetch from its own network.
        allowFetch: (_ctx, clientId) => mayFetchClientMetadata(clientId, settings.clientMetadata.privateOrigins),
      },
      resourceIndicators: {
        enabled: true,
        // A client that names no resource gets a token for the MCP URL, the one resource here.
        defaultResource: () => mcpResourceUrl(issuer),
        useGrantedResource: () => true,
        getResourceServerInfo(_ctx, resourceIndicator) {
          if (!resources.includes(resourceIndicator)) throw new errors.InvalidTarget(`this server issues tokens for ${resources.join(' and ')} only`);
          return { scope: OAUTH_SCOPES.join(' '), audience: resourceIndicator, accessTokenTTL: settings.accessTokenTtlS, accessTokenFormat: 'opaque' };
        },
      },
    },
    // OAuth 2.1: the authorization code flow only (no implicit, no hybrid).
    responseTypes: ['code'],
    pkce: { required: () => true },
    // Every authorization request is decided on the consent page: only the grant its consent just made is used, never one
    // the browser's session kept from an earlier consent. That one remembers the scopes refused then (so a consent is not
    // asked twice within one request), and reused it answered a later request at once with them still refused: a client
    // stepping up from `read` to `read write` (a 403 insufficient_scope) got a `read` token again without the page.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId;
      return typeof grantId === 'string' ? await ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    // MCP clients ask for the resource's scopes, not `offline_access`: a client registered for refresh tokens gets them.
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    // Tokens outlive the browser session of the consent (an agent runs long after the carrier closed the page).
    expiresWithSession: () => false,
    ttl: {
      AccessToken: settings.accessTokenTtlS,
      AuthorizationCode: 60,
      Interaction: 10 * 60,
      Session: 10 * 60,
      Grant: settings.refreshTokenTtlS,
      IdToken: 60 * 60,
      // A rotated refresh token keeps its chain's end: REFRESH_TOKEN_TTL is the longest a consent lasts without a new one.
      RefreshToken: (ctx: KoaContextWithOIDC) => ctx.oidc.entities.RotatedRefreshToken?.remainingTTL ?? settings.refreshTokenTtlS,
    },
    // RFC 7591's software_id and software_version are kept (an MCP client may send them); the hook of the metadata's
    // limits and of the redirect URI policy: called once per listed property, each time with the whole metadata, the
    // standard properties included, before oidc-provider's own checks.
    extraClientMetadata: {
      properties: ['software_id', 'software_version'],
      validator(_ctx, key, value, metadata) {
        if (value !== undefined && typeof value !== 'string') throw new errors.InvalidClientMetadata(`${key} must be a string`);
        if (key !== 'software_id') return;
        metadataLimits(metadata);
        redirectPolicy(metadata);
      },
    },
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' },
    // A client registers with the scopes it will ask for (RFC 7591 `scope`), and the metadata lists them.
    scopes: ['openid', 'offline_access', ...OAUTH_SCOPES],
    discovery: { service_documentation: `${issuer}/docs` },
    // An error the provider cannot send back to the client (a redirect_uri not registered: never redirected) is shown
    // as the consent pages' problem page, with their headers: nothing loaded from elsewhere (the library's default
    // page imports a web font), no script, no framing.
    async renderError(ctx, out) {
      ctx.set(CONSENT_HEADERS);
      const error = typeof out.error === 'string' ? out.error : 'server_error';
      const detail = typeof out.error_description === 'string' ? `: ${out.error_description}` : '';
      ctx.body = consentProblemPage(`${error}${detail}`);
    },
  };
  const provider = new Provider(issuer, configuration);
  // The service sets the forwarded host and protocol itself (lib/oauth/routes.ts): every URL it publishes is under the issuer.
  provider.proxy = true;
  return provider;
}
