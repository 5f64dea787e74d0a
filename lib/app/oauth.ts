import fp from 'fastify-plugin';
import { createOAuthProvider } from '../oauth/provider.ts';
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
    const provider = await createOAuthProvider(db, config.oauth);
    registerOAuthRoutes(app, db, provider, config.oauth);
  },
  { name: 'oauth', dependencies: ['config', 'database', 'rate-limit', 'auth'], fastify: '5.x' },
);
