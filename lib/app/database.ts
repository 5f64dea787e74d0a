import fp from 'fastify-plugin';
import type { Db } from 'mongodb';

declare module 'fastify' {
  interface FastifyInstance {
    /** The connected database (the caller opened it and closes it after the app). */
    db: Db;
    /** Pings the database, resolves with the latency in ms (/ready). */
    pingDatabase: () => Promise<number>;
    /** Why the database is known to be unusable now (the embedded engine restarting), or null: /ready answers 503 at once. */
    databaseProblem: () => string | null;
    /** Why this process must be restarted (the embedded engine could not be), or null: /health answers 503. */
    livenessProblem: () => string | null;
  }
}

export interface DatabasePluginOptions {
  db: Db;
  pingDatabase?: () => Promise<number>;
  databaseProblem?: () => string | null;
  livenessProblem?: () => string | null;
}

/** The database and what the service knows of its health; a ping waits at most READY_TIMEOUT_MS. */
export const databasePlugin = fp<DatabasePluginOptions>(
  async function database(app, options) {
    const { db } = options;
    const readyTimeoutMs = app.config.readyTimeoutMs;
    app.decorate('db', db);
    app.decorate(
      'pingDatabase',
      options.pingDatabase ??
        (async () => {
          const t0 = performance.now();
          await db.command({ ping: 1 }, { timeoutMS: readyTimeoutMs });
          return Math.round((performance.now() - t0) * 10) / 10;
        }),
    );
    app.decorate('databaseProblem', options.databaseProblem ?? (() => null));
    app.decorate('livenessProblem', options.livenessProblem ?? (() => null));
  },
  { name: 'database', dependencies: ['config'], fastify: '5.x' },
);
