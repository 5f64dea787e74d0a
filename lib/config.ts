/** Environment → typed configuration, validated once at start-up. */
export interface AppConfig {
  port: number;
  host: string;
  mongodbUri: string | null;
  mongodbDb: string;
  dataDir: string;
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
  /** Per-tenant alert quotas. */
  alerts: { /** ALERT_MAX_ACTIVE_JOBS: alert jobs a tenant may have scheduled and not yet run (default 10,000). */ maxActiveJobs: number };
  /** CFDI import limits (POST /api/imports, npm run import). */
  imports: ImportLimits;
  /** Largest POST /api/deliveries body (a CSV or JSON rows of reception tickets). */
  deliveriesBodyLimitBytes: number;
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

function int(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max} (got "${raw}")`);
  }
  return value;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false (got "${raw}")`);
}

/** CORS_ORIGINS: comma-separated origins (`https://app.example.com`) or `*`; unset or empty: none. */
function origins(env: NodeJS.ProcessEnv): string[] {
  const raw = (env.CORS_ORIGINS ?? '').trim();
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

/** An absolute http(s) URL without credentials, query or fragment (a path prefix is fine), without its trailing slash; unset: null. */
function baseUrl(env: NodeJS.ProcessEnv, name: string): string | null {
  const raw = (env[name] ?? '').trim();
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

/** A comma-separated list of ports, or `*` for any. */
function ports(env: NodeJS.ProcessEnv, name: string, fallback: number[]): number[] | 'any' {
  const raw = (env[name] ?? '').trim();
  if (raw === '') return fallback;
  if (raw === '*') return 'any';
  const list = raw.split(',').map((p) => p.trim());
  if (list.some((p) => !/^\d{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65535))
    throw new ConfigError(`${name} must be \`*\` or a comma-separated list of ports 1-65535 (got "${raw}")`);
  return [...new Set(list.map(Number))];
}

/** 32 bytes as 64 hex characters or base64. */
function key32(env: NodeJS.ProcessEnv, name: string): Buffer | null {
  const raw = env[name]?.trim();
  if (!raw) return null;
  const buf = /^[0-9a-fA-F]{64}$/.test(raw) ? Buffer.from(raw, 'hex') : /^[A-Za-z0-9+/_-]{43}=?$/.test(raw) ? Buffer.from(raw, 'base64') : null;
  if (!buf || buf.length !== 32) throw new ConfigError(`${name} must be 32 bytes as 64 hex characters or base64 (e.g. \`openssl rand -hex 32\`)`);
  return buf;
}

/** Connection caps and timeouts (issue 33); the headers' time limit never exceeds the request's. */
function connectionSettings(env: NodeJS.ProcessEnv): ConnectionSettings {
  const max = int(env, 'MAX_CONNECTIONS', 0, 0, 10_000_000);
  return {
    max: max === 0 ? null : max,
    // Behind a proxy every connection comes from the proxy: no per-address cap unless set.
    perAddressMax: int(env, 'MAX_CONNECTIONS_PER_ADDRESS', bool(env, 'TRUST_PROXY', false) ? 0 : 256, 0, 10_000_000),
    headersTimeoutMs: Math.min(int(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 600_000), int(env, 'REQUEST_TIMEOUT_MS', 30_000, 1000, 600_000)),
    // Above a load balancer's idle timeout (AWS ALB: 60 s), as Fastify's default: a balancer or a
    // client reusing a connection the service has just closed gets a reset. Idle connections are
    // bounded by the caps above, not by this.
    keepAliveTimeoutMs: int(env, 'KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 600_000),
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const port = int(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  return {
    port,
    host,
    mongodbUri: env.MONGODB_URI || null,
    mongodbDb: env.MONGODB_DB || 'freight',
    dataDir: env.DATA_DIR || './data',
    logLevel: env.LOG_LEVEL || 'info',
    documentBaseUrl: (env.DOCUMENT_BASE_URL || `http://localhost:${port}/files`).replace(/\/+$/, ''),
    rateLimit: {
      max: int(env, 'RATE_LIMIT_MAX', 600, 1, 10_000_000),
      ipMax: int(env, 'RATE_LIMIT_IP_MAX', 120, 1, 10_000_000),
      reportMax: int(env, 'REPORT_RATE_LIMIT_MAX', 30, 1, 10_000_000),
      // One report of a tenant at a time per instance: it holds one of the database's threads, not all.
      reportConcurrency: int(env, 'REPORT_MAX_CONCURRENT_PER_TENANT', 1, 1, 1000),
      reportQueue: int(env, 'REPORT_QUEUE_PER_TENANT', 10, 0, 10_000),
      windowMs: int(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 1000, 86_400_000),
    },
    redisUrl: env.REDIS_URL || null,
    worker: bool(env, 'ALERT_WORKER', true),
    queryTimeoutMs: int(env, 'QUERY_TIMEOUT_MS', 10_000, 100, 600_000),
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 30_000, 1000, 600_000),
    connections: connectionSettings(env),
    readyTimeoutMs: int(env, 'READY_TIMEOUT_MS', 1000, 100, 60_000),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 262_144, 1024, 10_485_760),
    trustProxy: bool(env, 'TRUST_PROXY', false),
    corsOrigins: origins(env),
    publicBaseUrl: baseUrl(env, 'PUBLIC_BASE_URL'),
    apiKeyCacheTtlMs: int(env, 'API_KEY_CACHE_TTL_MS', 10_000, 0, 300_000),
    apiKeyNegativeCacheTtlMs: int(env, 'API_KEY_NEGATIVE_CACHE_TTL_MS', 5_000, 0, 300_000),
    settingsCacheTtlMs: int(env, 'SETTINGS_CACHE_TTL_MS', 30_000, 0, 3_600_000),
    alerts: {
      maxActiveJobs: int(env, 'ALERT_MAX_ACTIVE_JOBS', 10_000, 1, 10_000_000),
    },
    imports: {
      bodyLimitBytes: int(env, 'IMPORT_BODY_LIMIT_BYTES', 67_108_864, 1024, 1_073_741_824),
      maxFiles: int(env, 'IMPORT_MAX_FILES', 20_000, 1, 1_000_000),
      maxFileBytes: int(env, 'IMPORT_MAX_FILE_BYTES', 2_097_152, 1024, 104_857_600),
      maxTotalBytes: int(env, 'IMPORT_MAX_TOTAL_BYTES', 1_073_741_824, 1024, 17_179_869_184),
      maxCompressionRatio: int(env, 'IMPORT_MAX_COMPRESSION_RATIO', 100, 2, 10_000),
      timeoutMs: int(env, 'IMPORT_TIMEOUT_MS', 900_000, 100, 86_400_000),
    },
    deliveriesBodyLimitBytes: int(env, 'DELIVERIES_BODY_LIMIT_BYTES', 4_194_304, 1024, 67_108_864),
    webhooks: {
      encryptionKey: key32(env, 'WEBHOOK_ENCRYPTION_KEY'),
      allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      allowedPorts: ports(env, 'WEBHOOK_ALLOWED_PORTS', [443, 80]),
      maxEndpoints: int(env, 'WEBHOOK_MAX_ENDPOINTS', 20, 1, 10_000),
      maxPendingTests: int(env, 'WEBHOOK_MAX_PENDING_TESTS', 10, 1, 100_000),
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      retryDelayMs: int(env, 'WEBHOOK_RETRY_DELAY_MS', 30_000, 10, 86_400_000),
      retryMaxDelayMs: int(env, 'WEBHOOK_RETRY_MAX_DELAY_MS', 3_600_000, 10, 86_400_000),
      retryWindowMs: int(env, 'WEBHOOK_RETRY_WINDOW_MS', 86_400_000, 100, 30 * 86_400_000),
      processEveryMs: int(env, 'WEBHOOK_PROCESS_EVERY_MS', 2000, 50, 3_600_000),
      concurrency: int(env, 'WEBHOOK_CONCURRENCY', 10, 1, 200),
      lockLifetimeMs: int(env, 'WEBHOOK_LOCK_LIFETIME_MS', 60_000, 1000, 86_400_000),
    },
  };
}
