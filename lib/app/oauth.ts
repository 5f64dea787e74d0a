import fp from 'fastify-plugin';
import { authorizationServer } from '../oauth/authorization-server.ts';
import { clientMetadataFetch } from '../oauth/client-metadata-fetch.ts';
import { registerOAuthRoutes } from '../oauth/routes.ts';

/**
 * OAuth 2.1 for MCP (OAUTH_*; lib/oauth/routes.ts): the protected resource metadata, the
 * authorization server and its consent page. Off (OAUTH_ENABLED=false): none of these routes, and
 * the MCP endpoints take API keys only (lib/app/auth.ts).
 */
export const oauthPlugin = fp(
  async function oauth(app) {
    const { config, db } = app;
    if (!config.oauth.enabled) return;
    // The routes now; oidc-provider, its keys and secrets when a request first needs them (lib/oauth/authorization-server.ts).
    const fetch = await clientMetadataFetch(config.oauth.clientMetadata);
    registerOAuthRoutes(app, db, authorizationServer(db, config.oauth, fetch, app.log), config.oauth);
  },
  { name: 'oauth', dependencies: ['config', 'database', 'rate-limit', 'auth'], fastify: '5.x' },
);
