import fp from 'fastify-plugin';
import { registerBinaryBodies } from '../http/binary-bodies.ts';
import { registerJsonBody } from '../http/json-body.ts';

/**
 * Bodies are JSON only: anything else is 415 (Fastify would otherwise hand text/plain bodies
 * through unvalidated); XML and zip bodies only where the spec declares them (POST
 * /api/imports); an empty body with a JSON content type is no body (MCP Python SDK's DELETE
 * /mcp), not a 400.
 */
export const bodyParsersPlugin = fp(
  async function bodyParsers(app) {
    app.removeContentTypeParser('text/plain');
    registerBinaryBodies(app);
    registerJsonBody(app);
  },
  { name: 'body-parsers', fastify: '5.x' },
);
