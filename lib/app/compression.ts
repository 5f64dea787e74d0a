import fp from 'fastify-plugin';
import { registerCompression } from '../http/compression-and-cors.ts';

/** gzip and br by Accept-Encoding, for the routes registered after it (a route's `x-compress: false` opts out). */
export const compressionPlugin = fp(
  async function compression(app) {
    await registerCompression(app);
  },
  { name: 'compression', fastify: '5.x' },
);
