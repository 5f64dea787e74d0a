/**
 * The service's one configuration schema: every environment variable it reads, as JSON Schema
 * (type, bounds, default, description). lib/config.ts validates the environment against it once
 * at start-up (a strict Ajv validator, no coercion, compiled from it by `npm run generate`:
 * generated/config-validator.js) and shapes the result into AppConfig;
 * scripts/configuration-table.ts renders it as the table of docs/configuration.md.
 *
 * Values are strings on the wire: lib/config.ts turns integers and booleans into numbers and
 * booleans itself (decimal digits only; true/false, 1/0, yes/no, on/off) before Ajv sees them,
 * and an empty value counts as unset. `x-default` says how a default computed by lib/config.ts
 * reads in the docs (no `default` then: the code supplies it).
 */
export const CONFIG_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    PORT: { type: 'integer', minimum: 0, maximum: 65535, default: 3000, description: 'Port the service listens on' },
    HOST: { type: 'string', default: '127.0.0.1', description: 'Address the service listens on (`0.0.0.0`: every interface)' },
    MONGODB_URI: { type: 'string', description: 'Real MongoDB 6+ (replica set or Atlas). Unset: the embedded engine' },
    MONGODB_DB: { type: 'string', default: 'freight', description: 'Database name' },
    MONGODB_APP_NAME: {
      type: 'string',
      default: 'freight-backoffice-api',
      description: "The driver's application name, shown in the server's logs and `currentOp`",
    },
    MONGODB_SERVER_SELECTION_TIMEOUT_MS: {
      type: 'integer',
      minimum: 0,
      maximum: 3_600_000,
      default: 5000,
      description: 'How long an operation waits for a usable database server before it fails (then 503 `database_unavailable`)',
    },
    MONGODB_MAX_POOL_SIZE: { type: 'integer', minimum: 0, maximum: 10_000, default: 20, description: 'Database connections per process (`0`: no limit)' },
    DATA_DIR: { type: 'string', default: './data', description: "Embedded engine's on-disk store" },
    DEMO_INVOICES: {
      type: 'integer',
      minimum: 0,
      maximum: 1_000_000,
      default: 3000,
      description: 'Invoices per tenant of the demo dataset `npm start` loads into an empty embedded database',
    },
    DEMO_TRIPS: {
      type: 'integer',
      minimum: 0,
      maximum: 1_000_000,
      default: 3000,
      description: 'Trips per tenant of the demo dataset `npm start` loads into an empty embedded database',
    },
    LOG_LEVEL: {
      type: 'string',
      enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      default: 'info',
      description:
        'pino level (JSON logs with request id and tenant; keys are never logged: credential headers are redacted, and so are keys put in a URL, `?api_key=…` or a path segment)',
    },
    DOCUMENT_BASE_URL: {
      type: 'string',
      'x-default': '`PUBLIC_BASE_URL`, else `http://localhost:$PORT`',
      description: 'Where the document links (`invoice.xml`, signed links to originals) start: the service as clients reach it',
    },
    PUBLIC_BASE_URL: {
      type: 'string',
      description:
        'The address clients reach the service at (`https://api.example.com`, a path prefix allowed; http(s), no credentials, query or fragment): the first server of the document at `/docs/json`, which Swagger UI and generated clients call. Unset: the fetched address on loopback, else `/`',
    },
    CORS_ORIGINS: {
      type: 'string',
      'x-default': 'unset (CORS off)',
      description: 'Comma-separated origins a browser may call the API from (`https://dash.example.com,http://localhost:5173`), or `*`',
    },
    TRUST_PROXY: {
      type: 'boolean',
      default: false,
      description:
        'Behind a reverse proxy or load balancer: take the client address from `X-Forwarded-For` (the per-address budget `RATE_LIMIT_IP_MAX` counts clients, not the proxy)',
    },
    REDIS_URL: {
      type: 'string',
      description: 'Share rate-limit counters between instances (see Production: while Redis is unreachable each instance counts on its own)',
    },
    RATE_LIMIT_MAX: { type: 'integer', minimum: 1, maximum: 10_000_000, default: 600, description: 'Requests per valid API key per window' },
    RATE_LIMIT_IP_MAX: {
      type: 'integer',
      minimum: 1,
      maximum: 10_000_000,
      default: 120,
      description:
        'Requests without a valid API key (none, unknown, revoked) per client address per window, counted before authentication: one more is a 429, and an address over it has its keys no longer looked up until the window resets (`GET /health` is never limited: it does no I/O, and `MAX_CONNECTIONS_PER_ADDRESS` bounds what one address holds)',
    },
    RATE_LIMIT_WINDOW_MS: { type: 'integer', minimum: 1000, maximum: 86_400_000, default: 60_000, description: 'The rate limits’ window' },
    REPORT_RATE_LIMIT_MAX: {
      type: 'integer',
      minimum: 1,
      maximum: 10_000_000,
      default: 30,
      description:
        'Reports (the tax summary and the five analytic audits, periods up to 366 days, seconds each) per tenant (all its keys) per window, a budget of their own besides `RATE_LIMIT_MAX`; MCP tool calls of them count',
    },
    REPORT_MAX_CONCURRENT_PER_TENANT: {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      default: 1,
      description:
        "A tenant's reports running at once on an instance: one tenant's year-long reports hold one database thread, not all of them, so other tenants' requests keep their latency",
    },
    REPORT_QUEUE_PER_TENANT: {
      type: 'integer',
      minimum: 0,
      maximum: 10_000,
      default: 10,
      description: "A tenant's reports waiting for their turn beyond those; more answer `429 rate_limited` with `retry-after`",
    },
    API_KEY_CACHE_TTL_MS: {
      type: 'integer',
      minimum: 0,
      maximum: 300_000,
      default: 10_000,
      description:
        'How long a valid API key is trusted without a database read: a key revoked by `npm run apikey -- revoke` (another process) stops working within this time; `0` turns the cache off',
    },
    API_KEY_NEGATIVE_CACHE_TTL_MS: {
      type: 'integer',
      minimum: 0,
      maximum: 300_000,
      default: 5000,
      description:
        'How long an unknown or revoked key is refused without a database read (`0`: off); a key created by another process after being tried works after this time',
    },
    SETTINGS_CACHE_TTL_MS: {
      type: 'integer',
      minimum: 0,
      maximum: 3_600_000,
      default: 30_000,
      description: "How long a tenant's settings are reused without a database read (`0`: off)",
    },
    MCP_SESSION_IDLE_MS: {
      type: 'integer',
      minimum: 1000,
      maximum: 86_400_000,
      default: 1_800_000,
      description: 'MCP sessions without a request for this long are closed',
    },
    MCP_SESSION_SWEEP_MS: { type: 'integer', minimum: 100, maximum: 3_600_000, default: 60_000, description: 'How often idle MCP sessions are looked for' },
    MCP_MAX_SESSIONS_PER_TENANT: {
      type: 'integer',
      minimum: 1,
      maximum: 100_000,
      default: 50,
      description: 'Open MCP sessions (both transports) per tenant; one more `initialize` is 429 `too_many_sessions`',
    },
    MCP_MAX_SESSIONS_PER_KEY: {
      type: 'integer',
      minimum: 1,
      maximum: 100_000,
      default: 10,
      description:
        "Open MCP sessions (both transports) per API key, so one key cannot take the tenant's whole allowance; one more `initialize` is 429 `too_many_sessions`",
    },
    MCP_KEEPALIVE_MS: {
      type: 'integer',
      minimum: 0,
      maximum: 3_600_000,
      default: 15_000,
      description: "SSE keep-alive interval on both MCP transports' streams (`0`: off)",
    },
    OAUTH_ENABLED: {
      type: 'boolean',
      default: true,
      description:
        'OAuth 2.1 for MCP (docs/mcp.md, "Hosted clients: OAuth"): protected resource metadata, the authorization server under `/oauth/`, its consent page, and access tokens on `/mcp` and `/sse`. `false`: API keys only',
    },
    OAUTH_ISSUER: {
      type: 'string',
      'x-default': '`PUBLIC_BASE_URL`, else `http://localhost:$PORT`',
      description:
        "The authorization server's issuer and the base of the MCP URL tokens are bound to (`$OAUTH_ISSUER/mcp`): the service as hosted clients reach it (http(s), no credentials, query or fragment)",
    },
    OAUTH_ACCESS_TOKEN_TTL_S: {
      type: 'integer',
      minimum: 60,
      maximum: 86_400,
      default: 3600,
      description: 'Lifetime of an OAuth access token, in seconds (1 hour by default)',
    },
    OAUTH_REFRESH_TOKEN_TTL_S: {
      type: 'integer',
      minimum: 300,
      maximum: 31_536_000,
      default: 2_592_000,
      description: 'Lifetime of an OAuth refresh token, in seconds (30 days by default; each use rotates it)',
    },
    OAUTH_REGISTRATIONS_PER_HOUR: {
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000,
      default: 20,
      description:
        'Dynamic client registrations (`POST /oauth/register`, anonymous) per client address per hour, a budget of its own besides `RATE_LIMIT_IP_MAX`: one more is a 429 with `retry-after`. A client registered and never consented is removed after 24 hours',
    },
    OAUTH_CLIENT_METADATA_PRIVATE_ORIGINS: {
      type: 'string',
      'x-default': 'none',
      description:
        'Origins (`https://host:port`, comma-separated) whose client ID metadata documents the authorization server may fetch though they are addresses, `localhost` or resolve to loopback or private networks: tests and private networks only. Unset: only public `https` names are fetched, and one resolving to a special-use address is refused (SSRF)',
    },
    OAUTH_CLIENT_METADATA_CA: {
      type: 'string',
      'x-default': 'none',
      description:
        "A PEM file of CA certificates trusted, besides the system's, when fetching client ID metadata documents from `OAUTH_CLIENT_METADATA_PRIVATE_ORIGINS` (a test's self-signed certificate, an internal CA)",
    },
    ALERT_WORKER: {
      type: 'boolean',
      default: true,
      description: 'Run the alert, webhook and export workers in the service (`npm run worker` runs them alone)',
    },
    ALERT_PROCESS_EVERY_MS: { type: 'integer', minimum: 50, maximum: 3_600_000, default: 5000, description: 'Alert worker: how often due jobs are polled' },
    ALERT_CONCURRENCY: { type: 'integer', minimum: 1, maximum: 100, default: 5, description: 'Alert worker: evaluations at once per worker' },
    ALERT_LOCK_LIFETIME_MS: {
      type: 'integer',
      minimum: 1000,
      maximum: 86_400_000,
      default: 300_000,
      description: 'A job locked by an alert worker that died runs elsewhere after this',
    },
    ALERT_RETRY_DELAY_MS: {
      type: 'integer',
      minimum: 10,
      maximum: 86_400_000,
      default: 30_000,
      description: 'Failed alert evaluations: first retry delay, doubled each time up to `ALERT_RETRY_MAX_DELAY_MS`',
    },
    ALERT_RETRY_MAX_DELAY_MS: {
      type: 'integer',
      minimum: 10,
      maximum: 86_400_000,
      default: 1_800_000,
      description: 'Failed alert evaluations: longest retry delay',
    },
    ALERT_MAX_RETRIES: { type: 'integer', minimum: 0, maximum: 100, default: 5, description: 'Failed alert evaluations: retries after the first failure' },
    ALERT_DRAIN_TIMEOUT_MS: {
      type: 'integer',
      minimum: 0,
      maximum: 3_600_000,
      default: 30_000,
      description: 'On shutdown, how long running alert evaluations may finish',
    },
    ALERT_QUERY_TIMEOUT_MS: {
      type: 'integer',
      minimum: 100,
      maximum: 3_600_000,
      default: 60_000,
      description: 'Server-side time limit of each alert rule query',
    },
    ALERT_MAX_ACTIVE_JOBS: {
      type: 'integer',
      minimum: 1,
      maximum: 10_000_000,
      default: 10_000,
      description: 'Alert jobs a tenant may have scheduled and not yet run; a schedule that would add more is 409 `quota_exceeded` (nothing written)',
    },
    EXPORT_TTL_S: {
      type: 'integer',
      minimum: 60,
      maximum: 2_592_000,
      default: 86_400,
      description: "How long a ready export's file and its download link are served (seconds); then the link is 404 and the file deleted",
    },
    EXPORT_MAX_ACTIVE: {
      type: 'integer',
      minimum: 1,
      maximum: 1000,
      default: 5,
      description: 'Exports a tenant may have queued or running; one more is 429 `quota_exceeded` with `retry-after`',
    },
    EXPORT_PROCESS_EVERY_MS: {
      type: 'integer',
      minimum: 50,
      maximum: 3_600_000,
      default: 1000,
      description: 'Export worker: how often queued exports are polled',
    },
    EXPORT_CONCURRENCY: { type: 'integer', minimum: 1, maximum: 32, default: 2, description: 'Export worker: exports built at once per worker' },
    EXPORT_LOCK_LIFETIME_MS: {
      type: 'integer',
      minimum: 1000,
      maximum: 86_400_000,
      default: 60_000,
      description: 'An export locked by a worker that died is started again elsewhere after this',
    },
    WEBHOOK_ENCRYPTION_KEY: {
      type: 'string',
      description:
        '32 bytes (64 hex characters or base64, e.g. `openssl rand -hex 32`) encrypting webhook secrets; unset: generated into `DATA_DIR` on the embedded engine, webhooks 503 with `MONGODB_URI`',
    },
    WEBHOOK_ALLOW_PRIVATE: { type: 'boolean', default: false, description: 'Allow webhook URLs on loopback/private/link-local addresses' },
    WEBHOOK_ALLOWED_PORTS: {
      type: 'string',
      default: '443,80',
      description:
        'Ports webhook URLs may use, checked at creation and at every delivery; a comma-separated list of ports 1-65535, or `*` for any (the tests set it with `WEBHOOK_ALLOW_PRIVATE=true` for receivers on 127.0.0.1 and random ports)',
    },
    WEBHOOK_MAX_ENDPOINTS: {
      type: 'integer',
      minimum: 1,
      maximum: 10_000,
      default: 20,
      description: 'Webhook endpoints per tenant (409 `quota_exceeded` beyond)',
    },
    WEBHOOK_MAX_PENDING_TESTS: {
      type: 'integer',
      minimum: 1,
      maximum: 100_000,
      default: 10,
      description:
        'Test deliveries (`POST /api/webhooks/{id}/test`) a tenant may have queued and not yet delivered or failed; one more is 429 `quota_exceeded` with `retry-after`',
    },
    WEBHOOK_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 120_000, default: 10_000, description: "One webhook delivery attempt's time limit" },
    WEBHOOK_RETRY_DELAY_MS: {
      type: 'integer',
      minimum: 10,
      maximum: 86_400_000,
      default: 30_000,
      description: 'Webhook retries: first delay, doubled each time up to `WEBHOOK_RETRY_MAX_DELAY_MS`',
    },
    WEBHOOK_RETRY_MAX_DELAY_MS: { type: 'integer', minimum: 10, maximum: 86_400_000, default: 3_600_000, description: 'Webhook retries: longest delay' },
    WEBHOOK_RETRY_WINDOW_MS: {
      type: 'integer',
      minimum: 100,
      maximum: 30 * 86_400_000,
      default: 86_400_000,
      description: 'Webhook retries go on while the event is younger than this; then the delivery is failed',
    },
    WEBHOOK_PROCESS_EVERY_MS: {
      type: 'integer',
      minimum: 50,
      maximum: 3_600_000,
      default: 2000,
      description: 'Webhook delivery worker: how often due deliveries are polled',
    },
    WEBHOOK_CONCURRENCY: { type: 'integer', minimum: 1, maximum: 200, default: 10, description: 'Webhook delivery worker: attempts at once' },
    WEBHOOK_LOCK_LIFETIME_MS: {
      type: 'integer',
      minimum: 1000,
      maximum: 86_400_000,
      default: 60_000,
      description: 'A delivery locked by a webhook worker that died is retried elsewhere after this',
    },
    QUERY_TIMEOUT_MS: { type: 'integer', minimum: 100, maximum: 600_000, default: 10_000, description: 'Server-side time limit of each query (`maxTimeMS`)' },
    REQUEST_TIMEOUT_MS: { type: 'integer', minimum: 1000, maximum: 600_000, default: 30_000, description: 'Whole-request time limit' },
    HEADERS_TIMEOUT_MS: {
      type: 'integer',
      minimum: 100,
      maximum: 600_000,
      default: 10_000,
      description:
        "A request's headers must be complete within this of the connection (or of the request's first byte on a kept-alive one), at most `REQUEST_TIMEOUT_MS`: a connection that sends nothing, or its headers byte by byte (slowloris), is answered 408 and closed within a second after it",
    },
    KEEP_ALIVE_TIMEOUT_MS: {
      type: 'integer',
      minimum: 100,
      maximum: 600_000,
      default: 72_000,
      description:
        "A kept-alive connection idle this long between requests is closed (about a second later; answers say `keep-alive: timeout=72`). Above common load balancers' idle timeout (AWS ALB: 60 s), as Fastify's default: a client or balancer reusing a connection the service just closed gets a reset. Idle connections are bounded by the connection caps, not by this",
    },
    MAX_CONNECTIONS_PER_ADDRESS: {
      type: 'integer',
      minimum: 0,
      maximum: 10_000_000,
      'x-default': '`256`; `0` with `TRUST_PROXY`',
      description:
        "Open connections one client address may hold (an IPv6 client per /64); one more is reset at once, before a byte is read. Counts the socket's peer, so behind a proxy (`TRUST_PROXY`) it is off unless set (cap clients at the proxy). `0`: no cap",
    },
    MAX_CONNECTIONS: {
      type: 'integer',
      minimum: 0,
      maximum: 10_000_000,
      default: 0,
      description:
        "Open connections in all; more are closed as accepted. `0`: the open-file limit less a fifth (at least 256), at most 16384. Kept below the process's open-file soft limit (`ulimit -n`, read from `/proc/self/limits`; 1,024 assumed elsewhere) so the database pool, Redis and files always get a descriptor: a larger value is lowered to the limit less 256 (logged)",
    },
    READY_TIMEOUT_MS: {
      type: 'integer',
      minimum: 100,
      maximum: 60_000,
      default: 1000,
      description: '`GET /ready` answers within this: 503 when the database has not answered a ping by then (at once while the embedded engine is restarting)',
    },
    METRICS_ENABLED: {
      type: 'boolean',
      default: true,
      description:
        'Serve Prometheus metrics at `GET /metrics` (request counts and latency per operation, MCP tool calls, imports, webhook deliveries, job queues, database health)',
    },
    METRICS_TOKEN: {
      type: 'string',
      minLength: 16,
      description:
        '`GET /metrics` then needs `authorization: Bearer <token>` (401 otherwise). Unset: open to whoever reaches the port, as most exporters are (keep the port off the internet, or set a token)',
    },
    WORKER_METRICS_PORT: {
      type: 'integer',
      minimum: 0,
      maximum: 65535,
      description:
        '`npm run worker` serves the same Prometheus metrics at `GET /metrics` on this port (on `HOST`; `0`: a free port, logged; `METRICS_TOKEN` and `METRICS_ENABLED` apply). Unset: no endpoint, so several workers can share a host',
    },
    METRICS_DATABASE_CACHE_MS: {
      type: 'integer',
      minimum: 0,
      maximum: 300_000,
      default: 5000,
      description: 'How long a scrape reuses the job queue depths and the database ping read by the previous one (`0`: read on every scrape)',
    },
    OTEL_EXPORTER_OTLP_ENDPOINT: {
      type: 'string',
      description:
        'OpenTelemetry traces (requests, MongoDB commands, jobs, MCP tool calls) sent by OTLP/HTTP to this base URL (`/v1/traces` is appended), e.g. `http://otel-collector:4318`. Unset: no traces',
    },
    OTEL_SERVICE_NAME: { type: 'string', default: 'freight-backoffice-api', description: 'The `service.name` of the traces' },
    BODY_LIMIT_BYTES: { type: 'integer', minimum: 1024, maximum: 10_485_760, default: 262_144, description: 'Largest request body (256 KiB by default)' },
    IMPORT_TIMEOUT_MS: {
      type: 'integer',
      minimum: 100,
      maximum: 86_400_000,
      default: 900_000,
      description:
        'Deadline of `POST /api/imports` and `POST /api/deliveries` instead of `REQUEST_TIMEOUT_MS` (15 min by default; 503 `deadline_exceeded` after it; files finished by then are stored whole, send the same files again to complete)',
    },
    IMPORT_BODY_LIMIT_BYTES: {
      type: 'integer',
      minimum: 1024,
      maximum: 1_073_741_824,
      default: 67_108_864,
      description:
        'Largest body of `POST /api/imports`, `/api/imports/xml` and `/api/imports/zip` (JSON files, one XML or one zip; 64 MiB by default; 413 beyond)',
    },
    IMPORT_MAX_FILES: {
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000,
      default: 20_000,
      description: 'Most files in one import (zip entries, files of the folders given to `npm run import`)',
    },
    IMPORT_MAX_FILE_BYTES: {
      type: 'integer',
      minimum: 1024,
      // Each file's original is kept as one MongoDB document (lib/originals), whose limit is 16 MiB.
      maximum: 15_728_640,
      default: 2_097_152,
      description: 'Largest single XML file, counted as it inflates (2 MiB by default; at most 15 MiB, kept whole as its original)',
    },
    IMPORT_MAX_TOTAL_BYTES: {
      type: 'integer',
      minimum: 1024,
      maximum: 17_179_869_184,
      default: 1_073_741_824,
      description: 'Most uncompressed bytes in one import (1 GiB by default)',
    },
    IMPORT_MAX_COMPRESSION_RATIO: {
      type: 'integer',
      minimum: 2,
      maximum: 10_000,
      default: 100,
      description: 'Highest uncompressed ÷ compressed size of a zip entry (zip bombs)',
    },
    DELIVERIES_BODY_LIMIT_BYTES: {
      type: 'integer',
      minimum: 1024,
      maximum: 67_108_864,
      default: 4_194_304,
      description:
        'Largest body of `POST /api/deliveries`, `/api/deliveries/csv` and the received assignments (JSON rows or a CSV; 4 MiB by default; 413 beyond)',
    },
  },
} as const;

type Properties = typeof CONFIG_SCHEMA.properties;
export type ConfigVariable = keyof Properties;

type ValueOf<S> = S extends { type: 'integer' } ? number : S extends { type: 'boolean' } ? boolean : S extends { enum: readonly (infer E)[] } ? E : string;

/** The environment once validated: a variable with a default is always there, one without may be unset. */
export type ConfigEnv = { [K in ConfigVariable]: Properties[K] extends { default: unknown } ? ValueOf<Properties[K]> : ValueOf<Properties[K]> | undefined };
