import { readFileSync } from 'node:fs';
import fp from 'fastify-plugin';
import type { Json } from '../spec/deref.ts';

/** The bundled OpenAPI document the service runs on (`npm run generate` writes it). */
export const SPEC_PATH = new URL('../../generated/openapi.json', import.meta.url);

/** A JSON object with the document's version. */
export type BundledSpec = { [key: string]: Json } & { info: { version: string } };

/** The bundled OpenAPI document, read once at start-up. */
export const loadSpec = (): BundledSpec => JSON.parse(readFileSync(SPEC_PATH, 'utf8')) as BundledSpec;

declare module 'fastify' {
  interface FastifyInstance {
    /** The bundled OpenAPI document (generated/openapi.json): routes, MCP tools and the served document come from it. */
    spec: BundledSpec;
  }
}

/** Reads the bundled document once for the plugins that build from it. */
export const specPlugin = fp(
  async function spec(app) {
    app.decorate('spec', loadSpec());
  },
  { name: 'spec', fastify: '5.x' },
);
