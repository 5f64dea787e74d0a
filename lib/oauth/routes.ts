/**
 * The HTTP side of OAuth for MCP (docs/mcp.md, "Hosted clients: OAuth"); not REST operations, so
 * not in the spec (like /docs and /metrics):
 * - protected resource metadata (RFC 9728) at /.well-known/oauth-protected-resource (the MCP URL),
 *   and its path-suffixed forms for /mcp and /sse;
 * - the authorization server's metadata (RFC 8414) at /.well-known/oauth-authorization-server and,
 *   the same document, OpenID discovery at /.well-known/openid-configuration;
 * - the authorization server's endpoints under /oauth/ (oidc-provider, lib/oauth/provider.ts, made by
 *   the first request that needs it: lib/oauth/authorization-server.ts);
 * - the consent page at /oauth/interaction/:uid (lib/oauth/consent-page.ts).
 * Every route is behind the general rate limit (per client address: none of them takes an API key); dynamic client
 * registration (POST /oauth/register, anonymous, and each one stored) has a budget of its own besides, per client address
 * and hour (OAUTH_REGISTRATIONS_PER_HOUR).
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from 'mongodb';
import { resolveApiKey } from '../auth/api-keys.ts';
import { ApiError, notFound } from '../http/api-error.ts';
import { chargeRequests } from '../http/rate-limit.ts';
import type { OAuthSettings } from '../config.ts';
import { CONSENT_HEADERS, consentPage, consentProblemPage } from './consent-page.ts';
import type Provider from 'oidc-provider';
import type { AuthorizationServer } from './authorization-server.ts';
import { INTERACTION_PATH, issuerPath } from './server-paths.ts';
import { MCP_RESOURCE_PATHS, mcpResourceUrl, mcpResourceUrls, OAUTH_SCOPES, PROTECTED_RESOURCE_METADATA_PATH, type McpResourcePath } from './resource-urls.ts';

/** The largest consent form accepted (a key and two scopes fit in well under 1 KB). */
const CONSENT_BODY_LIMIT = 8192;

/** Dynamic client registration (RFC 7591): a route of its own, with its own budget. */
const REGISTRATION_PATH = '/oauth/register';
const HOUR_MS = 3_600_000;

/**
 * Whether oidc-provider's router would take this path for its registration endpoint though it is not REGISTRATION_PATH as
 * Fastify matched it: its router ignores case and a trailing slash (lib/helpers/router.js), Fastify's does not, so
 * `/oauth/Register/` would reach registration through `/oauth/*`, past the registration budget.
 */
const registrationAlias = (url: string): boolean => {
  const path = url.split('?')[0]!;
  return path !== REGISTRATION_PATH && path.replace(/\/$/, '').toUpperCase() === REGISTRATION_PATH.toUpperCase();
};

/** RFC 9728 §2: the metadata of one MCP endpoint as a protected resource. */
export function protectedResourceMetadata(issuer: string, path: McpResourcePath): Record<string, unknown> {
  return {
    resource: mcpResourceUrl(issuer, path),
    authorization_servers: [issuer],
    scopes_supported: [...OAUTH_SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: 'Freight back office (MCP)',
    resource_documentation: `${issuer}/docs/mcp.json`,
  };
}

/** Copies what the hooks set (request id, rate limit) onto the raw response, then lets `run` answer on it. */
async function handOver(request: FastifyRequest, reply: FastifyReply, run: () => Promise<void>): Promise<FastifyReply> {
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
  reply.raw.setHeader('x-content-type-options', 'nosniff');
  reply.hijack();
  try {
    await run();
  } catch (err) {
    request.log.error({ err }, 'OAuth request failed');
    if (!reply.raw.headersSent) reply.raw.writeHead(500, CONSENT_HEADERS).end(consentProblemPage(`Internal error (request id ${request.id}).`));
    else if (!reply.raw.writableEnded) reply.raw.end();
  }
  return reply;
}

export function registerOAuthRoutes(app: FastifyInstance, db: Db, server: () => Promise<AuthorizationServer>, settings: OAuthSettings): void {
  const { issuer } = settings;
  const issuerUrl = new URL(issuer);
  const prefix = issuerPath(issuer);
  const resources = mcpResourceUrls(issuer);

  // oidc-provider's published URLs follow the request's host: it is told the issuer's, never a client-chosen Host.
  const toProvider = (request: FastifyRequest, reply: FastifyReply, url?: string) =>
    handOver(request, reply, async () => {
      const { callback } = await server();
      const req = request.raw as IncomingMessage & { originalUrl?: string };
      req.headers['x-forwarded-host'] = issuerUrl.host;
      req.headers['x-forwarded-proto'] = issuerUrl.protocol.slice(0, -1);
      delete req.headers['x-forwarded-for'];
      if (url !== undefined) req.url = url;
      req.originalUrl = `${prefix}${req.url}`;
      await new Promise<void>((resolve) => {
        reply.raw.once('close', resolve);
        reply.raw.once('finish', resolve);
        void callback(req, reply.raw);
      });
    });

  const publicJson = { cacheControl: 'public, max-age=300' };
  app.get(PROTECTED_RESOURCE_METADATA_PATH, { config: publicJson }, async () => protectedResourceMetadata(issuer, '/mcp'));
  for (const path of MCP_RESOURCE_PATHS)
    app.get(`${PROTECTED_RESOURCE_METADATA_PATH}${path}`, { config: publicJson }, async () => protectedResourceMetadata(issuer, path));

  // The provider's own endpoints read their bodies themselves (form-encoded, JSON for registration): no parser here.
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const methods = ['GET', 'POST'] as const;
    scope.route({
      method: 'GET',
      url: '/.well-known/oauth-authorization-server',
      exposeHeadRoute: false,
      handler: (q, r) => toProvider(q, r, '/.well-known/openid-configuration'),
    });
    scope.route({ method: 'GET', url: '/.well-known/openid-configuration', exposeHeadRoute: false, handler: (q, r) => toProvider(q, r) });
    // Registration is anonymous and each client is stored: OAUTH_REGISTRATIONS_PER_HOUR per client address (its own counter, shared
    // between instances with REDIS_URL), after the general budget (a route's own rate limit replaces the plugin's hook: the
    // general budget is charged first, by hand).
    const general = chargeRequests(app, app.config.rateLimit.windowMs);
    const perHour = settings.registrationsPerHour;
    scope.route({
      method: 'POST',
      url: REGISTRATION_PATH,
      config: {
        needsNoKey: true,
        rateLimit: {
          max: perHour,
          timeWindow: HOUR_MS,
          cache: 10_000,
          allowList: () => false,
          keyGenerator: (request) => `oauth-register:${request.ip}`,
          errorResponseBuilder: (_request, context) =>
            new ApiError(429, 'Too Many Requests', [
              `dynamic client registration limit of ${perHour} per hour per client address exceeded; retry in ${Math.ceil(context.ttl / 1000)} seconds`,
            ]),
        },
      },
      onRequest: async (request, reply) => {
        const refused = await general(request, reply, 1);
        if (refused) throw refused;
      },
      handler: (q, r) => toProvider(q, r),
    });
    scope.route({
      method: [...methods],
      url: '/oauth/*',
      exposeHeadRoute: false,
      handler: async (q, r) => {
        if (q.method === 'POST' && registrationAlias(q.url)) throw notFound(`dynamic client registration is at POST ${prefix}${REGISTRATION_PATH}`);
        return await toProvider(q, r);
      },
    });
  });

  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: CONSENT_BODY_LIMIT }, (_request, body, done) =>
      done(null, new URLSearchParams(body as string)),
    );
    const url = `${INTERACTION_PATH}/:uid`;
    scope.get(url, { exposeHeadRoute: false }, (request, reply) => handOver(request, reply, () => showConsent(request, reply)));
    scope.post(url, (request, reply) => handOver(request, reply, () => decideConsent(request, reply)));
  });

  const send = (reply: FastifyReply, status: number, html: string) => {
    reply.raw.writeHead(status, CONSENT_HEADERS).end(html);
  };

  /** The interaction of this browser (its cookie), or the page saying it is gone. */
  async function interactionOf({ provider, errors }: AuthorizationServer, request: FastifyRequest, reply: FastifyReply) {
    try {
      const details = await provider.interactionDetails(request.raw, reply.raw);
      if (details.uid !== (request.params as { uid: string }).uid) throw new errors.SessionNotFound('interaction mismatch');
      return details;
    } catch (err) {
      if (!(err instanceof errors.SessionNotFound)) throw err;
      send(reply, 400, consentProblemPage('This authorization request has expired, or was opened in another browser.'));
      return undefined;
    }
  }

  const requestedResource = (params: Record<string, unknown>): string => {
    const asked: unknown = Array.isArray(params.resource) ? (params.resource as unknown[])[0] : params.resource;
    return typeof asked === 'string' ? asked : mcpResourceUrl(issuer);
  };

  async function view(provider: Provider, details: Awaited<ReturnType<Provider['interactionDetails']>>, error?: string) {
    const clientId = String(details.params.client_id);
    const client = await provider.Client.find(clientId);
    const redirect = typeof details.params.redirect_uri === 'string' ? details.params.redirect_uri : '';
    let redirectHost = redirect;
    try {
      redirectHost = new URL(redirect).host;
    } catch {
      // shown as given
    }
    const requested = typeof details.params.scope === 'string' ? details.params.scope.split(' ') : [...OAUTH_SCOPES];
    return consentPage({
      action: `${prefix}${INTERACTION_PATH}/${details.uid}`,
      clientName: client?.clientName ?? clientId,
      redirectHost,
      resource: requestedResource(details.params),
      requested: requested.some((s) => (OAUTH_SCOPES as readonly string[]).includes(s)) ? requested : [...OAUTH_SCOPES],
      error,
    });
  }

  async function showConsent(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const authorization = await server();
    const details = await interactionOf(authorization, request, reply);
    if (details) send(reply, 200, await view(authorization.provider, details));
  }

  async function decideConsent(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const authorization = await server();
    const { provider } = authorization;
    const details = await interactionOf(authorization, request, reply);
    if (!details) return;
    const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
    if (form.get('decision') !== 'approve') {
      await provider.interactionFinished(
        request.raw,
        reply.raw,
        { error: 'access_denied', error_description: 'the carrier denied the authorization' },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const presented = form.get('api_key')?.trim() ?? '';
    const key = presented ? await resolveApiKey(db, presented) : null;
    if (!key) return send(reply, 401, await view(provider, details, 'Unknown or revoked API key: paste an active key of your company.'));
    const chosen = OAUTH_SCOPES.filter((s) => form.getAll('scope').includes(s));
    if (chosen.length === 0) return send(reply, 400, await view(provider, details, 'Choose what the client may do: read, write or both.'));
    const beyond = chosen.filter((s) => !key.scopes.includes(s));
    if (beyond.length)
      return send(
        reply,
        403,
        await view(provider, details, `This key may not ${beyond.join(' or ')} (it may ${key.scopes.join(' and ')}): untick it, or use another key.`),
      );
    const resource = requestedResource(details.params);
    if (!resources.includes(resource)) return send(reply, 400, consentProblemPage(`This server issues tokens for ${resources.join(' and ')} only.`));
    const grant = new provider.Grant({ accountId: key.keyId, clientId: String(details.params.client_id) });
    grant.addResourceScope(resource, chosen.join(' '));
    const refused = OAUTH_SCOPES.filter((s) => !chosen.includes(s));
    if (refused.length) grant.rejectResourceScope(resource, refused.join(' '));
    // The same scopes are the server's own too (a client registers with them): granted or refused alike, so nothing is asked twice.
    grant.addOIDCScope(chosen.join(' '));
    if (refused.length) grant.rejectOIDCScope(refused.join(' '));
    const asked = typeof details.params.scope === 'string' ? details.params.scope.split(' ') : [];
    // An OpenID client gets its ID token (the subject is the key's public id); nothing else of OpenID is offered.
    if (asked.includes('openid')) grant.addOIDCScope('openid');
    const grantId = await grant.save();
    request.log.info({ tenant: key.tenant, keyId: key.keyId, clientId: details.params.client_id, scopes: chosen }, 'OAuth consent given');
    await provider.interactionFinished(request.raw, reply.raw, { login: { accountId: key.keyId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }
}
