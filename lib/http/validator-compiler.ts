import type { FastifySchemaCompiler } from 'fastify';
import type { FastifyRouteSchemaDef } from 'fastify/types/schema.js';
import { validators, type GeneratedValidator } from '../../generated/validators.js';
import { BINARY_MEDIA_TYPES, binaryBodyValidator } from './binary-bodies.ts';
import { refusingNonFiniteNumbers } from './finite-numbers.ts';

/**
 * Fastify asks for a validator per route and part; we answer with the one
 * precompiled from the spec (`npm run generate`). A missing one means
 * generated/ is stale, which must stop the start-up, not silently skip checks.
 */
export function validatorCompilerFor(opts: { refiners?: ValidatorRefiners } = {}): FastifySchemaCompiler<unknown> {
  return (route) => compile(route, opts.refiners ?? {});
}

/**
 * Wraps a generated validator, e.g. to explain in plain words why a field's pattern refused a
 * value. The areas that need one export their own (lib/webhooks/url-validation.ts); the
 * composition root passes them in, so this module depends on no area.
 */
export type ValidatorRefiner = (validate: GeneratedValidator) => GeneratedValidator;
/** Refiners by validator key: `"<METHOD> <route> <part>"` (e.g. `POST /api/webhooks body`). */
export type ValidatorRefiners = Readonly<Record<string, ValidatorRefiner>>;

function compile({ schema, method, url, httpPart, contentType }: FastifyRouteSchemaDef<unknown>, refiners: ValidatorRefiners) {
  // Binary bodies (string/binary in the spec) are bytes, not JSON: nothing to validate but their type.
  if (httpPart === 'body' && (BINARY_MEDIA_TYPES as readonly string[]).includes(contentType ?? '')) return binaryBodyValidator as never;
  // The HEAD twin of a GET route (exposeHeadRoutes) validates exactly as the GET.
  const key = `${method === 'HEAD' ? 'GET' : method} ${url} ${httpPart}`;
  const validate = validators[key];
  if (!validate) throw new Error(`no generated validator for "${key}": run npm run generate`);
  const refine = refiners[key];
  // What is coerced from text (query, path, headers) may overflow to Infinity: refused (finite-numbers.ts).
  const checked = httpPart === 'body' ? validate : refusingNonFiniteNumbers(validate, schema);
  return (refine ? refine(checked) : checked) as never;
}
