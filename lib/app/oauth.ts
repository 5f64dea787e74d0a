import fp from 'fastify-plugin';

/**
 * OAuth 2.1 for MCP (OAUTH_*; lib/oauth/routes.ts): the protected resource metadata, the
 * authorization server and its consent page. Off (OAUTH_ENABLED=false): none of these routes, and
 * the MCP endpoints take API keys only (lib/app/auth.ts).
 */
export const oauthPlugin = fp(
  async function oauth(app) {
    const { config, db } = app;
    if (!config.oauth.enabled) return;
    // oidc-provider is loaded only when OAuth is on; its runtime notice (it asks for Node 22) goes to the service's log, not a bare stderr line.
    const notices: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => void notices.push(args.map(String).join(' '));
    let modules;
    try {
      modules = await Promise.all([import('../oauth/provider.ts'), import('../oauth/routes.ts')]);
    } finally {
      console.warn = warn;
    }
    // Info, not warn: the notice is its Node 22 recommendation, known and accepted on the Node 20 this service runs and tests on (docs/mcp.md).
    for (const notice of notices) app.log.info({ notice }, 'OAuth server library notice');
    const [{ createOAuthProvider }, { registerOAuthRoutes }] = modules;
    const provider = await createOAuthProvider(db, config.oauth);
    registerOAuthRoutes(app, db, provider, config.oauth);
  },
  { name: 'oauth', dependencies: ['config', 'database', 'rate-limit', 'auth'], fastify: '5.x' },
);
