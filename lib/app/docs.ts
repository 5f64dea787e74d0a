import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { firstServer, withFirstServer } from '../http/served-document.ts';
import { MCP_SPEC_PATH, SPEC_PATH, V1_SPEC_PATH } from './spec.ts';

type Document = { servers?: { url: string; description?: string }[] };

/** The other documents, beside the current REST one (/docs/json): each read once, served with the same first server. */
const OTHER_DOCUMENTS: Record<string, URL> = { '/docs/v1.json': V1_SPEC_PATH, '/docs/mcp.json': MCP_SPEC_PATH };

/**
 * The served document and Swagger UI at /docs, from the same bundled file the service runs on.
 * The served document names this service as its first server, so Swagger UI and generated
 * clients call it: PUBLIC_BASE_URL, a loopback address as fetched, else `/` (never a Host echoed).
 * The deprecated version 1 of the lists is a document of its own at /docs/v1.json, the MCP
 * transports (not REST operations) at /docs/mcp.json.
 */
export const docsPlugin = fp(
  async function docs(app) {
    const { publicBaseUrl } = app.config;
    await app.register(swagger, { mode: 'static', specification: { path: fileURLToPath(SPEC_PATH), baseDir: fileURLToPath(new URL('.', SPEC_PATH)) } });
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { persistAuthorization: true },
      transformSpecificationClone: true,
      transformSpecification: (document, request) => withFirstServer(document as Document, firstServer(request, publicBaseUrl)),
    });
    for (const [url, file] of Object.entries(OTHER_DOCUMENTS)) {
      const document = JSON.parse(readFileSync(file, 'utf8')) as Document;
      app.get(url, async (request) => withFirstServer(document, firstServer(request, publicBaseUrl)));
    }
  },
  { name: 'docs', dependencies: ['config'], fastify: '5.x' },
);
