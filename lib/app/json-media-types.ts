import fp from 'fastify-plugin';
import { bareJsonMediaTypes } from '../http/json-media-type.ts';

/** JSON answers name their media type without Fastify's `; charset=utf-8` (lib/http/json-media-type.ts). */
export const jsonMediaTypesPlugin = fp(
  async function jsonMediaTypes(app) {
    bareJsonMediaTypes(app);
  },
  { name: 'json-media-types', fastify: '5.x' },
);
