import { fileURLToPath } from 'node:url';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { firstServer, withFirstServer } from '../http/served-document.ts';
import { SPEC_PATH } from './spec.ts';

/**
 * The served document and Swagger UI at /docs, from the same bundled file the service runs on.
 * The served document names this service as its first server, so Swagger UI and generated
 * clients call it: PUBLIC_BASE_URL, a loopback address as fetched, else `/` (never a Host echoed).
 */
export const docsPlugin = fp(
  async function docs(app) {
    const { publicBaseUrl } = app.config;
    await app.register(swagger, { mode: 'static', specification: { path: fileURLToPath(SPEC_PATH), baseDir: fileURLToPath(new URL('.', SPEC_PATH)) } });
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { persistAuthorization: true },
      transformSpecificationClone: true,
      transformSpecification: (document, request) =>
        withFirstServer(document as { servers?: { url: string; description?: string }[] }, firstServer(request, publicBaseUrl)),
    });
  },
  { name: 'docs', dependencies: ['config'], fastify: '5.x' },
);
