import fp from 'fastify-plugin';
import { apiKeyCache, type ApiKeyCache } from '../auth/api-key-cache.ts';
import { settingsCache, type SettingsCache } from '../settings/settings-cache.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** Resolved and refused API keys (API_KEY_CACHE_TTL_MS, API_KEY_NEGATIVE_CACHE_TTL_MS). */
    apiKeyCache: ApiKeyCache;
    /** Tenants' stored settings (SETTINGS_CACHE_TTL_MS). */
    settingsCache: SettingsCache;
  }
}

/**
 * Per-request reads that change rarely: resolved keys and tenant settings. The caches are the
 * database's (one per Db handle): keys stored or revoked and settings saved through that handle
 * outside a request (scripts, another app on the same database) must reach the same cache.
 * This plugin gives them the configured TTLs and hands them to the app's own users.
 */
export const cachesPlugin = fp(
  async function caches(app) {
    const { config, db } = app;
    const keys = apiKeyCache(db);
    keys.ttlMs = config.apiKeyCacheTtlMs;
    keys.negativeTtlMs = config.apiKeyNegativeCacheTtlMs;
    const settings = settingsCache(db);
    settings.ttlMs = config.settingsCacheTtlMs;
    app.decorate('apiKeyCache', keys);
    app.decorate('settingsCache', settings);
  },
  { name: 'caches', dependencies: ['config', 'database'], fastify: '5.x' },
);
