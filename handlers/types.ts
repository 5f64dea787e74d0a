import type { FastifyReply, FastifyRequest } from 'fastify';
import type { operations } from '../generated/api.d.ts';
import type { operations as operationsV1 } from '../generated/api-v1.d.ts';
import type { ValidatedQueries } from '../generated/validated.d.ts';
import type { ServiceContext } from '../lib/context.ts';
import type { McpOperationId } from '../lib/mcp/operation-ids.ts';
import type { AppConfig, ExportSettings, WebhookSettings } from '../lib/config.ts';
import type { ServiceMetrics } from '../lib/metrics/service-metrics.ts';

/**
 * Typed handler map, one entry per operationId of the spec (checked at compile
 * time), except the MCP transport operations, whose routes lib/mcp registers.
 */
export type OperationId = Exclude<keyof operations, McpOperationId>;

type Params<K extends OperationId> = operations[K]['parameters'];
/** The query after validation (generated from the spec: declared defaults are present). */
type Query<K extends OperationId> = K extends keyof ValidatedQueries ? ValidatedQueries[K] : unknown;
type Path<K extends OperationId> = Params<K> extends { path?: infer P } ? NonNullable<P> : unknown;
type Headers<K extends OperationId> = Params<K> extends { header?: infer H } ? NonNullable<H> : unknown;
type Body<K extends OperationId> = operations[K] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : unknown;

export type OperationRequest<K extends OperationId> = FastifyRequest<{
  Querystring: Query<K>;
  Params: Path<K>;
  Headers: Headers<K>;
  Body: Body<K>;
}>;

type Responses<K extends OperationId> = operations[K]['responses'];
type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, 200 | 201 | 202 | 203 | 204 | 206>;
/** Every body a response can carry: its JSON media types (`application/json`, `application/vnd.…+json`). */
type JsonBodies<R> = R extends { content: infer C } ? { [M in keyof C]: M extends `${string}json` ? C[M] : never }[keyof C] : never;

/**
 * What an operation answers on success: the union of its 2xx JSON bodies as the spec declares
 * them (as hey-api's Fastify route types do), so an answer that does not follow the spec fails
 * `npm run typecheck`. `FastifyReply` is the reply itself, returned once it has been sent.
 */
export type OperationReply<K extends OperationId> = { [S in SuccessStatus<K>]: JsonBodies<Responses<K>[S]> }[SuccessStatus<K>] | V1Reply<K>;

/**
 * The deprecated version 1 of a list (spec/v1.yaml, its own document so that the current one's
 * lists answer one schema): the same route answers it when asked for, so its handler may too.
 */
type V1Operations = { listFinancialDocs: 'listFinancialDocsV1'; listShipments: 'listShipmentsV1' };
type V1Reply<K extends OperationId> = K extends keyof V1Operations ? JsonBodies<operationsV1[V1Operations[K]]['responses'][200]> : never;

export type OperationHandler<K extends OperationId> = (request: OperationRequest<K>, reply: FastifyReply) => Promise<OperationReply<K> | FastifyReply>;

export type HandlerMap = { [K in OperationId]: OperationHandler<K> };

/** What handlers are built from: the service context plus process-level hooks. */
export interface HandlerDeps extends ServiceContext {
  startedAt: number;
  version: string;
  pingDatabase: () => Promise<number>;
  /** How long /ready waits for the database's answer before it says 503 (READY_TIMEOUT_MS). */
  readyTimeoutMs: number;
  /** Why the database is known to be unusable now (the embedded engine restarting), or null. */
  databaseProblem: () => string | null;
  /** Why this process should be restarted (the embedded engine could not be), or null. */
  livenessProblem: () => string | null;
  /** What the areas count for GET /metrics (imported files here). */
  metrics: ServiceMetrics;
  /** Aborted when the service starts closing: long operations (imports) stop at their next step. */
  shutdown: AbortSignal;
  /** Per-tenant alert quotas (ALERT_MAX_ACTIVE_JOBS). */
  alerts: AppConfig['alerts'];
  /** Webhook settings, the secret-encryption key included (lib/webhooks). */
  webhooks: WebhookSettings;
  /** Export settings (lib/exports): the files' lifetime, the per-tenant cap, the worker's tunables. */
  exports: ExportSettings;
}
