import { readFileSync } from 'node:fs';
import fp from 'fastify-plugin';
import { deepFreeze, type Json } from '../spec/deref.ts';

/** The bundled OpenAPI document the service runs on (`npm run generate` writes it). */
export const SPEC_PATH = new URL('../../generated/openapi.json', import.meta.url);

/** The deprecated version 1 of the lists (spec/v1.yaml), a document of its own served at /docs/v1.json. */
export const V1_SPEC_PATH = new URL('../../generated/openapi-v1.json', import.meta.url);

/** The MCP transports (spec/mcp.yaml), a document of its own served at /docs/mcp.json: not REST operations. */
export const MCP_SPEC_PATH = new URL('../../generated/openapi-mcp.json', import.meta.url);

/** A JSON object with the document's version. */
export type BundledSpec = { [key: string]: Json } & { info: { version: string } };

/** The bundled OpenAPI document, read once at start-up. */
export const loadSpec = (): BundledSpec => JSON.parse(readFileSync(SPEC_PATH, 'utf8')) as BundledSpec;

let bundled: BundledSpec | undefined;

/**
 * The bundled document every app of this process runs on: read once per process (the tests
 * build several apps in one; the operation table and its dereference are computed once per
 * document object, lib/spec/operations.ts), frozen since all of them share it.
 */
export const bundledSpec = (): BundledSpec => (bundled ??= deepFreeze(loadSpec()));

/** The bundled version 1 document (the routes it names are the current document's: it adds their version 1 answers). */
export const loadV1Spec = (): BundledSpec => JSON.parse(readFileSync(V1_SPEC_PATH, 'utf8')) as BundledSpec;

/** The bundled MCP transports document. */
export const loadMcpSpec = (): BundledSpec => JSON.parse(readFileSync(MCP_SPEC_PATH, 'utf8')) as BundledSpec;

declare module 'fastify' {
  interface FastifyInstance {
    /** The bundled OpenAPI document (generated/openapi.json): routes, MCP tools and the served document come from it. */
    spec: BundledSpec;
  }
}

/** The bundled document for the plugins that build from it. */
export const specPlugin = fp(
  async function spec(app) {
    app.decorate('spec', bundledSpec());
  },
  { name: 'spec', fastify: '5.x' },
);
