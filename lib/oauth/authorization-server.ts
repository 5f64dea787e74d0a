/**
 * The authorization server (provider.ts: oidc-provider and koa), made by the first request that
 * needs it rather than at start-up: loading the library and making a database's first signing key
 * cost every process that builds the app ~0.5 CPU-s (each test file, each spawned service), and
 * most never serve an OAuth request (issue 39). The protected resource metadata and access tokens
 * on /mcp need none of it. A failure (the database down) is not kept: the next request tries again.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from 'mongodb';
import type Provider from 'oidc-provider';
import type { errors } from 'oidc-provider';
import type { OAuthSettings } from '../config.ts';
import { onFirstUse } from '../shared/on-first-use.ts';

export interface AuthorizationServer {
  provider: Provider;
  /** The provider's request handler (koa's), made once. */
  callback: ReturnType<Provider['callback']>;
  errors: typeof errors;
}

/** `fetch`: the client metadata fetch, made at start-up (lib/oauth/client-metadata-fetch.ts: an unreadable CA file stops the service there). */
export function authorizationServer(
  db: Db,
  settings: OAuthSettings,
  fetch: typeof globalThis.fetch,
  log: FastifyBaseLogger,
): () => Promise<AuthorizationServer> {
  return onFirstUse(async () => {
    // Its runtime notice (it asks for Node 22) goes to the service's log, not a bare stderr line.
    const notices: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => void notices.push(args.map(String).join(' '));
    let modules;
    try {
      modules = await Promise.all([import('./provider.ts'), import('oidc-provider')]);
    } finally {
      console.warn = warn;
    }
    // Info, not warn: the notice is its Node 22 recommendation, known and accepted on the Node 20 this service runs and tests on (docs/mcp.md).
    for (const notice of notices) log.info({ notice }, 'OAuth server library notice');
    const [{ createOAuthProvider }, library] = modules;
    const provider = await createOAuthProvider(db, settings, fetch);
    return { provider, callback: provider.callback(), errors: library.errors };
  });
}
