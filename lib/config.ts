/**
 * Environment → typed configuration, validated once at start-up against the one schema of every
 * variable (lib/config-schema.ts; its table: docs/configuration.md, `npm run generate`).
 */
import type { ErrorObject } from 'ajv';
import validateConfig, { schemaText } from '../generated/config-validator.js';
import { CONFIG_SCHEMA, type ConfigEnv, type ConfigVariable } from './config-schema.ts';
import type { AlertWorkerSettings } from './alerts/worker.ts';
import type { McpSessionSettings } from './mcp/options.ts';

export interface AppConfig {
  port: number;
  host: string;
  mongodbUri: string | null;
  mongodbDb: string;
  /** MongoDB driver settings (lib/db/client.ts). */
  mongodb: MongoSettings;
  dataDir: string;
  /** The embedded engine's supervision (scripts/embedded-mongo/supervisor.ts): restarts allowed within a window. */
  /** Demo dataset per tenant that `npm start` loads into an empty embedded database. */
  demo: { invoices: number; trips: number };
  logLevel: string;
  /** Base URL of CFDI PDF/XML files; storage keys are resolved against it. */
  documentBaseUrl: string;
  /** Requests per valid API key (max) and without a valid key per client address (ipMax), per window. */
  rateLimit: { max: number; ipMax: number; windowMs: number; reportMax: number; reportConcurrency: number; reportQueue: number };
  redisUrl: string | null;
  /** Run the alert worker in this process. */
  worker: boolean;
  /** Per-query server-side time limit. */
  queryTimeoutMs: number;
  requestTimeoutMs: number;
  /** Connection limits (lib/http/connection-limits.ts). */
  connections: ConnectionSettings;
  /** How long GET /ready waits for the database's answer to a ping before it answers 503. */
  readyTimeoutMs: number;
  /** GET /metrics (lib/app/metrics.ts): on or off, the bearer token it needs (null: open), how long database readings are reused, and the port of `npm run worker`'s (null: none). */
  metrics: { enabled: boolean; token: string | null; databaseCacheMs: number; workerPort: number | null };
  /** OpenTelemetry traces (lib/app/tracing.ts): the OTLP base URL (null: off) and the service's name in them. */
  tracing: { endpoint: string | null; serviceName: string };
  bodyLimitBytes: number;
  trustProxy: boolean;
  /** PUBLIC_BASE_URL: the address clients reach this service at, the first server of the served OpenAPI document (null: see lib/http/served-document.ts). */
  publicBaseUrl: string | null;
  /** Origins a browser may call the API from (CORS); empty: CORS off. */
  corsOrigins: string[];
  /** How long a valid API key is trusted without a database read: the longest a revocation from another process takes (0 = no cache). */
  apiKeyCacheTtlMs: number;
  /** How long an unknown or revoked key is refused without a database read (0 = no negative cache). */
  apiKeyNegativeCacheTtlMs: number;
  /** How long a tenant's settings are reused without a database read (0 = no cache). */
  settingsCacheTtlMs: number;
  webhooks: WebhookSettings;
  /** MCP sessions (lib/mcp/options.ts; the key check interval follows apiKeyCacheTtlMs). */
  mcp: McpSessionSettings;
  /** OAuth 2.1 for MCP (lib/oauth): on or off, the issuer (the MCP URL is `${issuer}/mcp`), token lifetimes in seconds. */
  oauth: OAuthSettings;
  /** Per-tenant alert quotas, and the alert worker's tunables (lib/alerts/worker.ts). */
  alerts: {
    /** ALERT_MAX_ACTIVE_JOBS: alert jobs a tenant may have scheduled and not yet run (default 10,000). */
    maxActiveJobs: number;
    workerSettings: AlertWorkerSettings;
  };
  /** CFDI import limits (POST /api/imports, npm run import). */
  imports: ImportLimits;
  /** Exports of lists and reports (lib/exports; docs/exports.md). */
  exports: ExportSettings;
  /** Largest POST /api/deliveries body (a CSV or JSON rows of reception tickets). */
  deliveriesBodyLimitBytes: number;
}

export interface OAuthSettings {
  enabled: boolean;
  /** OAUTH_ISSUER, else PUBLIC_BASE_URL, else http://localhost:$PORT; no trailing slash. */
  issuer: string;
  accessTokenTtlS: number;
  refreshTokenTtlS: number;
  /** Dynamic client registrations per client address per hour (OAUTH_REGISTRATIONS_PER_HOUR). */
  registrationsPerHour: number;
  /** Client ID metadata documents: origins fetched though private (OAUTH_CLIENT_METADATA_PRIVATE_ORIGINS) and the CA file trusted for them. */
  clientMetadata: { privateOrigins: string[]; caFile: string | null };
}

export interface MongoSettings {
  /** MONGODB_APP_NAME: shown in server logs / currentOp. */
  appName: string;
  /** MONGODB_SERVER_SELECTION_TIMEOUT_MS: how long an operation waits for a usable server. */
  serverSelectionTimeoutMs: number;
  /** MONGODB_MAX_POOL_SIZE: connection pool size (0: unlimited). */
  maxPoolSize: number;
}

export interface ConnectionSettings {
  /** MAX_CONNECTIONS: open connections in all (null, the default: the open-file soft limit less a fifth, at least 256 less, at most 16,384; never above the limit less 256). */
  max: number | null;
  /** MAX_CONNECTIONS_PER_ADDRESS: open connections per client address, IPv6 per /64 (default 256; 0: no cap, the default with TRUST_PROXY). */
  perAddressMax: number;
  /** HEADERS_TIMEOUT_MS: a request's headers must be complete within this of the connection or of the request's first byte (default 10000; at most REQUEST_TIMEOUT_MS). */
  headersTimeoutMs: number;
  /** KEEP_ALIVE_TIMEOUT_MS: a kept-alive connection idle for this long between requests is closed (default 72000, above load balancers' 60 s). */
  keepAliveTimeoutMs: number;
}

export interface ImportLimits {
  /** Largest POST /api/imports body (one XML or one zip). */
  bodyLimitBytes: number;
  /** Most files in one import (entries of a zip, files of a folder). */
  maxFiles: number;
  /** Largest single XML file (uncompressed). */
  maxFileBytes: number;
  /** Most uncompressed bytes of one import. */
  maxTotalBytes: number;
  /** Highest uncompressed ÷ compressed size of a zip entry (zip bombs). */
  maxCompressionRatio: number;
  /**
   * How long POST /api/imports may run before it answers 503 deadline_exceeded
   * (instead of REQUEST_TIMEOUT_MS: a 10,000-file zip takes minutes). Files
   * finished by then are stored whole; sending the same files again completes it.
   */
  timeoutMs: number;
}

/** Exports (lib/exports); every field has an env override. */
export interface ExportSettings {
  /** EXPORT_TTL_S: how long a ready export's file and its link are served (default 86400). */
  ttlSeconds: number;
  /** EXPORT_MAX_ACTIVE: exports a tenant may have queued or running; one more is 429 `quota_exceeded` (default 5). */
  maxActive: number;
  /** EXPORT_PROCESS_EVERY_MS: how often the export worker polls for queued exports (default 1000). */
  processEveryMs: number;
  /** EXPORT_CONCURRENCY: exports built at once per worker (default 2). */
  concurrency: number;
  /** EXPORT_LOCK_LIFETIME_MS: an export locked by a worker that died is started again elsewhere after this (default 60000). */
  lockLifetimeMs: number;
}

/** Webhook delivery (lib/webhooks); every field has an env override. */
export interface WebhookSettings {
  /** WEBHOOK_ENCRYPTION_KEY (32 bytes, hex or base64): encrypts signing secrets at rest. Null: not configured (see lib/webhooks/encryption-key.ts). */
  encryptionKey: Buffer | null;
  /** WEBHOOK_ALLOW_PRIVATE: allow loopback/private/link-local targets (tests, on-premise receivers). */
  allowPrivate: boolean;
  /** WEBHOOK_ALLOWED_PORTS: ports a webhook URL may use (default 443,80; `*`: any). */
  allowedPorts: readonly number[] | 'any';
  /** WEBHOOK_MAX_ENDPOINTS: endpoints per tenant (default 20). */
  maxEndpoints: number;
  /** WEBHOOK_MAX_PENDING_TESTS: test deliveries a tenant may have queued and not yet delivered or failed (default 10). */
  maxPendingTests: number;
  /** WEBHOOK_TIMEOUT_MS: one attempt's time limit (default 10000). */
  timeoutMs: number;
  /** WEBHOOK_RETRY_DELAY_MS: first retry delay, doubled each time (default 30000)... */
  retryDelayMs: number;
  /** ...up to WEBHOOK_RETRY_MAX_DELAY_MS (default 3600000)... */
  retryMaxDelayMs: number;
  /** ...while the event is younger than WEBHOOK_RETRY_WINDOW_MS (default 86400000); then the delivery is failed. */
  retryWindowMs: number;
  /** WEBHOOK_PROCESS_EVERY_MS: how often the delivery worker polls for due deliveries (default 2000). */
  processEveryMs: number;
  /** WEBHOOK_CONCURRENCY: attempts at once per worker (default 10). */
  concurrency: number;
  /** WEBHOOK_LOCK_LIFETIME_MS: a delivery locked by a worker that died is retried elsewhere after this (default 60000). */
  lockLifetimeMs: number;
}

export class ConfigError extends Error {}

const TRUE = ['1', 'true', 'yes', 'on'];
const FALSE = ['0', 'false', 'no', 'off'];

/**
 * The raw environment as the schema's types: integers (decimal digits only: `12abc`, `1e3`, `0x10`
 * and `1.5` stay strings, which Ajv then refuses) and booleans parsed here, by hand, since Ajv
 * coerces nothing; an empty value is unset (its default applies). Other variables are left out.
 */
function typedEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(CONFIG_SCHEMA.properties)) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    if (schema.type === 'integer') out[name] = /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw;
    else if (schema.type === 'boolean') out[name] = TRUE.includes(raw.toLowerCase()) ? true : FALSE.includes(raw.toLowerCase()) ? false : raw;
    else out[name] = raw;
  }
  return out;
}

/** Every invalid variable, each naming what it allows and what it got, on one line (scripts/start.ts prints it as is). */
function describe(errors: readonly ErrorObject[], env: NodeJS.ProcessEnv): string {
  const lines = new Set<string>();
  for (const error of errors) {
    const name = error.instancePath.slice(1) as ConfigVariable;
    const schema: { type: string; minimum?: number; maximum?: number; enum?: readonly string[] } | undefined = CONFIG_SCHEMA.properties[name];
    if (!schema) {
      lines.add(`configuration: ${error.message ?? 'invalid'}`);
      continue;
    }
    const got = `(got "${env[name]}")`;
    if (schema.type === 'integer') lines.add(`${name} must be an integer between ${schema.minimum} and ${schema.maximum} ${got}`);
    else if (schema.type === 'boolean') lines.add(`${name} must be true or false ${got}`);
    else if (schema.enum) lines.add(`${name} must be one of ${schema.enum.join(', ')} ${got}`);
    else lines.add(`${name} ${error.message ?? 'is invalid'} ${got}`);
  }
  return [...lines].join('; ');
}

let compiledFromSchema: boolean | undefined;

/**
 * The environment validated against CONFIG_SCHEMA (defaults filled in); throws ConfigError naming each invalid variable.
 * The validator is the schema compiled by `npm run generate` (strict Ajv: no coercion; `x-default` the schema's
 * documentation-only annotation; scripts/config-validator.ts), so no process compiles it at start.
 */
export function validateEnv(env: NodeJS.ProcessEnv): ConfigEnv {
  compiledFromSchema ??= schemaText === JSON.stringify(CONFIG_SCHEMA);
  if (!compiledFromSchema) throw new Error('generated/config-validator.js was compiled from another lib/config-schema.ts: run npm run generate');
  const data = typedEnv(env);
  if (!validateConfig(data)) throw new ConfigError(describe(validateConfig.errors ?? [], env));
  return data as ConfigEnv;
}

/** CORS_ORIGINS: comma-separated origins (`https://app.example.com`) or `*`; unset or empty: none. */
function origins(value: string | undefined): string[] {
  const raw = (value ?? '').trim();
  if (raw === '') return [];
  return raw
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean)
    .map((o) => {
      if (o === '*') return o;
      let url: URL;
      try {
        url = new URL(o);
      } catch {
        throw new ConfigError(`CORS_ORIGINS: "${o}" is not an origin (scheme://host[:port])`);
      }
      if (url.origin !== o.replace(/\/$/, '')) throw new ConfigError(`CORS_ORIGINS: "${o}" is not an origin (scheme://host[:port], no path)`);
      return url.origin;
    });
}

/** A comma-separated list of `https` origins (scheme://host[:port], no path); unset or empty: none. */
function httpsOrigins(name: ConfigVariable, value: string | undefined): string[] {
  const list = (value ?? '')
    .split(',')
    .map((o) => o.trim())
    .filter(Boolean);
  return list.map((o) => {
    let url: URL | null = null;
    try {
      url = new URL(o);
    } catch {
      // refused below
    }
    if (!url || url.protocol !== 'https:' || url.origin !== o.replace(/\/$/, ''))
      throw new ConfigError(`${name}: "${o}" is not an https origin (https://host[:port], no path)`);
    return url.origin;
  });
}

/** An absolute http(s) URL without credentials, query or fragment (a path prefix is fine), without its trailing slash; unset: null. */
function baseUrl(name: ConfigVariable, value: string | undefined): string | null {
  const raw = (value ?? '').trim();
  if (raw === '') return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name}: "${raw}" is not an absolute URL (https://api.example.com)`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password || url.search || url.hash) {
    throw new ConfigError(`${name}: "${raw}" must be an http(s) URL without credentials, query or fragment`);
  }
  return url.href.replace(/\/+$/, '');
}

/** A comma-separated list of ports, or `*` for any; blank: the schema's default. */
function ports(name: ConfigVariable, value: string): number[] | 'any' {
  const raw = value.trim() || String(CONFIG_SCHEMA.properties.WEBHOOK_ALLOWED_PORTS.default);
  if (raw === '*') return 'any';
  const list = raw.split(',').map((p) => p.trim());
  if (list.some((p) => !/^\d{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65535))
    throw new ConfigError(`${name} must be \`*\` or a comma-separated list of ports 1-65535 (got "${raw}")`);
  return [...new Set(list.map(Number))];
}

/** 32 bytes as 64 hex characters or base64. */
function key32(name: ConfigVariable, value: string | undefined): Buffer | null {
  const raw = value?.trim();
  if (!raw) return null;
  const buf = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : /^[A-Za-z0-9+/_-]{43}=?$/.test(raw) ? Buffer.from(raw, 'base64') : null;
  if (!buf || buf.length !== 32) throw new ConfigError(`${name} must be 32 bytes as 64 hex characters or base64 (e.g. \`openssl rand -hex 32\`)`);
  return buf;
}

/** Connection caps and timeouts (issue 33); the headers' time limit never exceeds the request's. */
function connectionSettings(env: ConfigEnv): ConnectionSettings {
  return {
    max: env.MAX_CONNECTIONS === 0 ? null : env.MAX_CONNECTIONS,
    // Behind a proxy every connection comes from the proxy: no per-address cap unless set.
    perAddressMax: env.MAX_CONNECTIONS_PER_ADDRESS ?? (env.TRUST_PROXY ? 0 : 256),
    headersTimeoutMs: Math.min(env.HEADERS_TIMEOUT_MS, env.REQUEST_TIMEOUT_MS),
    // Above a load balancer's idle timeout (AWS ALB: 60 s), as Fastify's default: a balancer or a
    // client reusing a connection the service has just closed gets a reset. Idle connections are
    // bounded by the caps above, not by this.
    keepAliveTimeoutMs: env.KEEP_ALIVE_TIMEOUT_MS,
  };
}

/** The configuration: `env` validated against CONFIG_SCHEMA (lib/config-schema.ts), shaped for the code. Throws ConfigError on an invalid value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const e = validateEnv(env);
  return {
    port: e.PORT,
    host: e.HOST,
    mongodbUri: e.MONGODB_URI ?? null,
    mongodbDb: e.MONGODB_DB,
    mongodb: { appName: e.MONGODB_APP_NAME, serverSelectionTimeoutMs: e.MONGODB_SERVER_SELECTION_TIMEOUT_MS, maxPoolSize: e.MONGODB_MAX_POOL_SIZE },
    dataDir: e.DATA_DIR,
    demo: { invoices: e.DEMO_INVOICES, trips: e.DEMO_TRIPS },
    logLevel: e.LOG_LEVEL,
    documentBaseUrl: (e.DOCUMENT_BASE_URL ?? e.PUBLIC_BASE_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ''),
    rateLimit: {
      max: e.RATE_LIMIT_MAX,
      ipMax: e.RATE_LIMIT_IP_MAX,
      reportMax: e.REPORT_RATE_LIMIT_MAX,
      // One report of a tenant at a time per instance: it holds one of the database's threads, not all.
      reportConcurrency: e.REPORT_MAX_CONCURRENT_PER_TENANT,
      reportQueue: e.REPORT_QUEUE_PER_TENANT,
      windowMs: e.RATE_LIMIT_WINDOW_MS,
    },
    redisUrl: e.REDIS_URL ?? null,
    worker: e.ALERT_WORKER,
    queryTimeoutMs: e.QUERY_TIMEOUT_MS,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    connections: connectionSettings(e),
    readyTimeoutMs: e.READY_TIMEOUT_MS,
    metrics: {
      enabled: e.METRICS_ENABLED,
      token: e.METRICS_TOKEN ?? null,
      databaseCacheMs: e.METRICS_DATABASE_CACHE_MS,
      workerPort: e.WORKER_METRICS_PORT ?? null,
    },
    tracing: { endpoint: baseUrl('OTEL_EXPORTER_OTLP_ENDPOINT', e.OTEL_EXPORTER_OTLP_ENDPOINT), serviceName: e.OTEL_SERVICE_NAME },
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    trustProxy: e.TRUST_PROXY,
    corsOrigins: origins(e.CORS_ORIGINS),
    publicBaseUrl: baseUrl('PUBLIC_BASE_URL', e.PUBLIC_BASE_URL),
    apiKeyCacheTtlMs: e.API_KEY_CACHE_TTL_MS,
    apiKeyNegativeCacheTtlMs: e.API_KEY_NEGATIVE_CACHE_TTL_MS,
    settingsCacheTtlMs: e.SETTINGS_CACHE_TTL_MS,
    mcp: {
      idleTimeoutMs: e.MCP_SESSION_IDLE_MS,
      sweepIntervalMs: e.MCP_SESSION_SWEEP_MS,
      maxSessionsPerTenant: e.MCP_MAX_SESSIONS_PER_TENANT,
      maxSessionsPerKey: e.MCP_MAX_SESSIONS_PER_KEY,
      keepAliveMs: e.MCP_KEEPALIVE_MS,
    },
    oauth: {
      enabled: e.OAUTH_ENABLED,
      issuer: baseUrl('OAUTH_ISSUER', e.OAUTH_ISSUER) ?? baseUrl('PUBLIC_BASE_URL', e.PUBLIC_BASE_URL) ?? `http://localhost:${e.PORT}`,
      accessTokenTtlS: e.OAUTH_ACCESS_TOKEN_TTL_S,
      refreshTokenTtlS: e.OAUTH_REFRESH_TOKEN_TTL_S,
      registrationsPerHour: e.OAUTH_REGISTRATIONS_PER_HOUR,
      clientMetadata: {
        privateOrigins: httpsOrigins('OAUTH_CLIENT_METADATA_PRIVATE_ORIGINS', e.OAUTH_CLIENT_METADATA_PRIVATE_ORIGINS),
        caFile: e.OAUTH_CLIENT_METADATA_CA?.trim() || null,
      },
    },
    alerts: {
      maxActiveJobs: e.ALERT_MAX_ACTIVE_JOBS,
      workerSettings: {
        processEveryMs: e.ALERT_PROCESS_EVERY_MS,
        concurrency: e.ALERT_CONCURRENCY,
        lockLifetimeMs: e.ALERT_LOCK_LIFETIME_MS,
        retryDelayMs: e.ALERT_RETRY_DELAY_MS,
        retryMaxDelayMs: e.ALERT_RETRY_MAX_DELAY_MS,
        maxRetries: e.ALERT_MAX_RETRIES,
        drainTimeoutMs: e.ALERT_DRAIN_TIMEOUT_MS,
        queryTimeoutMs: e.ALERT_QUERY_TIMEOUT_MS,
      },
    },
    imports: {
      bodyLimitBytes: e.IMPORT_BODY_LIMIT_BYTES,
      maxFiles: e.IMPORT_MAX_FILES,
      maxFileBytes: e.IMPORT_MAX_FILE_BYTES,
      maxTotalBytes: e.IMPORT_MAX_TOTAL_BYTES,
      maxCompressionRatio: e.IMPORT_MAX_COMPRESSION_RATIO,
      timeoutMs: e.IMPORT_TIMEOUT_MS,
    },
    deliveriesBodyLimitBytes: e.DELIVERIES_BODY_LIMIT_BYTES,
    exports: {
      ttlSeconds: e.EXPORT_TTL_S,
      maxActive: e.EXPORT_MAX_ACTIVE,
      processEveryMs: e.EXPORT_PROCESS_EVERY_MS,
      concurrency: e.EXPORT_CONCURRENCY,
      lockLifetimeMs: e.EXPORT_LOCK_LIFETIME_MS,
    },
    webhooks: {
      encryptionKey: key32('WEBHOOK_ENCRYPTION_KEY', e.WEBHOOK_ENCRYPTION_KEY),
      allowPrivate: e.WEBHOOK_ALLOW_PRIVATE,
      allowedPorts: ports('WEBHOOK_ALLOWED_PORTS', e.WEBHOOK_ALLOWED_PORTS),
      maxEndpoints: e.WEBHOOK_MAX_ENDPOINTS,
      maxPendingTests: e.WEBHOOK_MAX_PENDING_TESTS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      retryDelayMs: e.WEBHOOK_RETRY_DELAY_MS,
      retryMaxDelayMs: e.WEBHOOK_RETRY_MAX_DELAY_MS,
      retryWindowMs: e.WEBHOOK_RETRY_WINDOW_MS,
      processEveryMs: e.WEBHOOK_PROCESS_EVERY_MS,
      concurrency: e.WEBHOOK_CONCURRENCY,
      lockLifetimeMs: e.WEBHOOK_LOCK_LIFETIME_MS,
    },
  };
}
