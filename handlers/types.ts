import type { FastifyReply, FastifyRequest } from 'fastify';
import type { operations } from '../generated/api.d.ts';
import type { ServiceContext } from '../lib/context.ts';
import type { McpOperationId } from '../lib/mcp/operation-ids.ts';

/**
 * Typed handler map, one entry per operationId of the spec (checked at compile
 * time), except the MCP transport operations, whose routes lib/mcp registers.
 */
export type OperationId = Exclude<keyof operations, McpOperationId>;

type Params<K extends OperationId> = operations[K]['parameters'];
type Query<K extends OperationId> = Params<K> extends { query?: infer Q } ? NonNullable<Q> : unknown;
type Path<K extends OperationId> = Params<K> extends { path?: infer P } ? NonNullable<P> : unknown;
type Headers<K extends OperationId> = Params<K> extends { header?: infer H } ? NonNullable<H> : unknown;
type Body<K extends OperationId> = operations[K] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : unknown;

export type OperationRequest<K extends OperationId> = FastifyRequest<{
  Querystring: Query<K>;
  Params: Path<K>;
  Headers: Headers<K>;
  Body: Body<K>;
}>;

/** Query after validation: defaults from the spec are filled in, so declared defaults are present. */
export type ValidatedQuery<K extends OperationId, D extends keyof Query<K>> = Query<K> & Required<Pick<Query<K>, D>>;

export type OperationHandler<K extends OperationId> = (request: OperationRequest<K>, reply: FastifyReply) => Promise<unknown>;

export type HandlerMap = { [K in OperationId]: OperationHandler<K> };

/** What handlers are built from: the service context plus process-level hooks. */
export interface HandlerDeps extends ServiceContext {
  startedAt: number;
  version: string;
  pingDatabase: () => Promise<number>;
}
