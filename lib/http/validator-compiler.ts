import type { FastifySchemaCompiler } from 'fastify';
import { validators } from '../../generated/validators.js';
import { BINARY_MEDIA_TYPES, binaryBodyValidator } from './binary-bodies.ts';

/**
 * Fastify asks for a validator per route and part; we answer with the one
 * precompiled from the spec (`npm run generate`). A missing one means
 * generated/ is stale, which must stop the start-up, not silently skip checks.
 */
export const generatedValidatorCompiler: FastifySchemaCompiler<unknown> = ({ method, url, httpPart, contentType }) => {
  // Binary bodies (string/binary in the spec) are bytes, not JSON: nothing to validate but their type.
  if (httpPart === 'body' && (BINARY_MEDIA_TYPES as readonly string[]).includes(contentType ?? '')) return binaryBodyValidator as never;
  // The HEAD twin of a GET route (exposeHeadRoutes) validates exactly as the GET.
  const key = `${method === 'HEAD' ? 'GET' : method} ${url} ${httpPart}`;
  const validate = validators[key];
  if (!validate) throw new Error(`no generated validator for "${key}": run npm run generate`);
  return validate as never;
};
