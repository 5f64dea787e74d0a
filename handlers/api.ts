import type { RouteHandlerMethod, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import openapiGlue from 'fastify-openapi-glue';
import type { HandlerMap, OperationId } from './types.ts';
import { routePolicy } from './route-policy.ts';
import { tenantDataRoute } from '../lib/http/cache-control.ts';
import { noBody, onlyQueryParameters, requireBody } from '../lib/http/hardening.ts';
import { listOperations } from '../lib/spec/operations.ts';
import type { Json } from '../lib/spec/deref.ts';

/**
 * The copy of the spec glue builds routes from. Glue warns about every media type of the
 * document that has no content-type parser, responses included, though only request bodies
 * are ever parsed; the responses' other media types (the DIOT's `text/csv`) are left out of its copy. Responses are shaped by the
 * domain layer and serialised as JSON whatever their schema (lib/app/validation.ts).
 */
function glueSpecification(spec: Json): object {
  type Operation = {
    responses?: Record<string, { content?: Record<string, unknown> }>;
    requestBody?: { content?: Record<string, unknown> };
    'x-also-accepts'?: string[];
  };
  const copy = structuredClone(spec) as { paths?: Record<string, Record<string, Operation>> };
  for (const item of Object.values(copy.paths ?? {})) {
    for (const op of Object.values(item)) {
      // The raw bodies earlier clients send to an operation now documented for JSON only (`x-also-accepts`;
      // each has its own operation too): declared to glue, so the route parses them (lib/http/binary-bodies.ts).
      for (const type of op?.['x-also-accepts'] ?? [])
        if (op.requestBody?.content) op.requestBody.content[type] = { schema: { type: 'string', format: 'binary' } };
      for (const response of Object.values(op?.responses ?? {})) {
        if (!response?.content) continue;
        for (const type of Object.keys(response.content)) if (type !== 'application/json') delete response.content[type];
      }
    }
  }
  return copy;
}

/**
 * The spec's operations through glue, each bound to its handler, with the policy the spec states
 * for it (x-request-deadline, x-body-limit, x-rate-limit, x-compress: handlers/route-policy.ts;
 * x-rate-limit-budget). Authentication is an onRequest hook, so 401 comes before 400.
 */
export const apiPlugin = fp<{ handlers: HandlerMap }>(
  async function api(app, options) {
    const { config, spec, requestDeadlines, limitRequests, authenticate, reports } = app;
    const { handlers } = options;
    const operations = new Map(listOperations(spec).map((op) => [op.operationId, op]));
    const noQueryParameters = onlyQueryParameters();
    // Imports take whole archives, deliveries a month of tickets; every other body stays within BODY_LIMIT_BYTES.
    const bodyLimits = { default: undefined, imports: config.imports.bodyLimitBytes, deliveries: config.deliveriesBodyLimitBytes };

    await app.register(openapiGlue, {
      specification: glueSpecification(spec),
      operationResolver: (operationId: string, method: string, url: string) => {
        const handler = handlers[operationId as OperationId];
        if (!handler) throw new Error(`no handler for operation ${operationId}`);
        const op = operations.get(operationId);
        const policy = routePolicy(operationId, op?.extensions ?? {});
        const bodyLimit = bodyLimits[policy.bodyLimit];
        const route: RouteOptions = {
          method: method.toUpperCase(),
          url: op?.route ?? url,
          // Validation has checked the request against this operation's schemas: its typed handler serves the route.
          handler: handler as RouteHandlerMethod,
          // The deadline starts first: authentication reads the database too; the rate limit before
          // authentication (requests without a valid key count per address).
          onRequest: op?.secured
            ? [
                ...requestDeadlines[policy.deadline],
                limitRequests,
                op.method === 'GET' ? authenticate.read : authenticate.write,
                ...(op.extensions['x-rate-limit-budget'] === 'reports' ? [reports.budget, reports.acquire] : []),
              ]
            : [...requestDeadlines[policy.deadline]],
          ...(op?.extensions['x-rate-limit-budget'] === 'reports' ? { onResponse: [reports.release] } : {}),
          // Unknown query parameters are a 400 everywhere: the validators say so where the spec lists some.
          preValidation: [
            ...(op?.querystring ? [] : [noQueryParameters]),
            ...(op?.bodyRequired ? [requireBody] : []),
            ...(op && !op.takesBody ? [noBody] : []),
          ],
          ...(bodyLimit === undefined ? {} : { bodyLimit }),
          config: op?.secured
            ? tenantDataRoute
            : { ...(policy.tenantData ? tenantDataRoute : {}), ...(policy.rateLimited ? {} : { rateLimit: false }), needsNoKey: true },
          ...(policy.compressed ? {} : { compress: false, decompress: false }),
        };
        return route;
      },
    });
  },
  {
    name: 'api',
    dependencies: ['config', 'spec', 'validation', 'errors', 'body-parsers', 'compression', 'deadlines', 'rate-limit', 'auth', 'report-turns'],
    fastify: '5.x',
  },
);
