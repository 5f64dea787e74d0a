import type { FastifySchemaCompiler } from 'fastify';
import { validators } from '../../generated/validators.js';

/**
 * Fastify asks for a validator per route and part; we answer with the one
 * precompiled from the spec (`npm run generate`). A missing one means
 * generated/ is stale, which must stop the start-up, not silently skip checks.
 */
export const generatedValidatorCompiler: FastifySchemaCompiler<unknown> = ({ method, url, httpPart }) => {
  // The HEAD twin of a GET route (exposeHeadRoutes) validates exactly as the GET.
  const key = `${method === 'HEAD' ? 'GET' : method} ${url} ${httpPart}`;
  const validate = validators[key];
  if (!validate) throw new Error(`no generated validator for "${key}": run npm run generate`);
  return validate as never;
};
