import fp from 'fastify-plugin';
import { limitConnections, type ConnectionLimitsState } from '../http/connection-limits.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The connection caps in force and what they refused (lib/http/connection-limits.ts). */
    connectionLimits: ConnectionLimitsState;
  }
}

/** Connection caps, global (below the open-file limit) and per client address: set on the server before it listens. */
export const connectionLimitsPlugin = fp(
  async function connectionLimits(app) {
    app.decorate('connectionLimits', limitConnections(app.server, app.config.connections, app.log));
  },
  { name: 'connection-limits', dependencies: ['config'], fastify: '5.x' },
);
