/**
 * MongoDB client factory for the service, the worker, scripts and tests.
 * Works against a real MongoDB (MONGODB_URI) and against the embedded engine, whose launcher
 * (scripts/embedded-mongo/) hands its URI here.
 */
import { MongoClient, type Db, type MongoClientOptions } from 'mongodb';
import { watchMonitors } from './monitor-watchdog.ts';

export interface ConnectMongoOptions {
  /** How long an operation waits for a usable server (default 5000; the service's: MONGODB_SERVER_SELECTION_TIMEOUT_MS, AppConfig.mongodb). */
  serverSelectionTimeoutMS?: number;
  /** Connection pool size (default 20; the service's: MONGODB_MAX_POOL_SIZE). */
  maxPoolSize?: number;
  /** Shown in server logs / currentOp (default 'freight-backoffice-api'; the service's: MONGODB_APP_NAME). */
  appName?: string;
  /** Anything else passed straight to the driver; overrides the defaults above. */
  driver?: MongoClientOptions;
}

export interface MongoConnection {
  client: MongoClient;
  db: Db;
}

/** Driver options used by connectMongo (exported for tests and diagnostics). */
export function mongoClientOptions(opts: ConnectMongoOptions = {}): MongoClientOptions {
  return {
    appName: opts.appName ?? 'freight-backoffice-api',
    serverSelectionTimeoutMS: opts.serverSelectionTimeoutMS ?? 5_000,
    connectTimeoutMS: 10_000,
    socketTimeoutMS: 0, // rely on per-operation timeouts (maxTimeMS) rather than killing idle sockets
    maxPoolSize: opts.maxPoolSize ?? 20,
    minPoolSize: 0,
    maxIdleTimeMS: 60_000,
    heartbeatFrequencyMS: 10_000,
    retryWrites: true,
    retryReads: true,
    // An acknowledged write is on disk: journaled (a standalone) and on a majority (a replica set).
    // The embedded engine answers such a write once its store has written it (docs/reliability.md).
    // Bulk tools opt out per database or operation (scripts/seed.ts).
    writeConcern: { w: 'majority', journal: true },
    // ignoreUndefined stays false on purpose: with it, a filter like { tenantId: undefined }
    // would silently become {} and match every tenant's documents.
    ...opts.driver,
  };
}

/**
 * Connect and verify the server answers (ping), so a bad URI fails at start-up, not on first request.
 * On failure the client is closed before the error is rethrown.
 */
export async function connectMongo(uri: string, dbName: string, opts: ConnectMongoOptions = {}): Promise<MongoConnection> {
  if (!uri) throw new Error('connectMongo: uri is required');
  if (!dbName) throw new Error('connectMongo: dbName is required');
  const options = mongoClientOptions(opts);
  const client = new MongoClient(uri, options);
  const watchdog = watchMonitors(client, { connectTimeoutMS: options.connectTimeoutMS ?? 30_000 });
  client.once('topologyClosed', () => watchdog.stop());
  try {
    await client.connect();
    const db = client.db(dbName);
    await db.command({ ping: 1 });
    return { client, db };
  } catch (err) {
    await client.close(true).catch(() => {});
    throw err;
  }
}
