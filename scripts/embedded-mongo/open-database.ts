/**
 * The database of a process of scripts/ (`npm start`, the CLI tools): MONGODB_URI when set, else
 * the embedded engine on DATA_DIR, started here (launcher.ts) and supervised (supervisor.ts), or
 * the one a running `npm start` launched, attached through its port file. The service itself
 * (handlers/app.ts, lib/) sees only the connected database (lib/db/client.ts `connectMongo`) and
 * the engine's health as callbacks (`health`, handed to buildApp by scripts/start.ts).
 */
import { readFile, writeFile, rm, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Db, MongoClient } from 'mongodb';
import { connectMongo } from '../../lib/db/client.ts';
import { startEmbeddedMongo, type EmbeddedMongo } from './launcher.ts';
import { EngineSupervisor, type EngineSupervisorOptions } from './supervisor.ts';
import type { AppConfig } from '../../lib/config.ts';

export interface OpenDatabase {
  client: MongoClient;
  db: Db;
  /** Set when this process started the embedded engine (and must stop it): the first engine. */
  engine: EmbeddedMongo | null;
  /** Set when this process started the embedded engine: restarts it if it dies (scripts/embedded-mongo/supervisor.ts). */
  supervisor: EngineSupervisor | null;
  /** Whether the database is the embedded engine (scripts/start.ts then loads the demo data into an empty one). */
  embedded: boolean;
  /** The engine's health for the service (buildApp's `databaseProblem`, `livenessProblem`): always null without a supervisor. */
  health: DatabaseHealth;
  close(): Promise<void>;
}

/**
 * What the service learns of the database's engine without asking it (handed to buildApp):
 * - databaseProblem: why the database is known to be down (the engine restarting): GET /ready 503 at once;
 * - livenessProblem: why this process must be restarted (the engine could not be): GET /health 503.
 */
export interface DatabaseHealth {
  databaseProblem: () => string | null;
  livenessProblem: () => string | null;
}

const HEALTHY: DatabaseHealth = { databaseProblem: () => null, livenessProblem: () => null };

/** The health callbacks of a supervised engine (null: no engine of this process, nothing known). */
export function engineHealth(supervisor: EngineSupervisor | null): DatabaseHealth {
  if (!supervisor) return HEALTHY;
  return {
    databaseProblem: () => supervisor.problem(),
    livenessProblem: () => (supervisor.state === 'failed' ? (supervisor.problem() ?? 'the database engine failed') : null),
  };
}

const portFile = (dataDir: string) => path.join(dataDir, 'embedded-mongo.port');
/** How long a service waits for an engine still answering on DATA_DIR's port to go away before refusing to start. */
const ORPHAN_ENGINE_GRACE_MS = 15_000;

/**
 * Who opens the database, for the embedded engine on DATA_DIR:
 * - `tool` (the default: `npm run apikey`, `import`, `seed`, `worker`): attach to the engine a
 *   running `npm start` launched (its port is in DATA_DIR), so the tools work beside the
 *   service; else start one for the tool's own run.
 * - `service` (`npm start`, which holds DATA_DIR/service.lock, scripts/embedded-mongo/data-dir.ts): never
 *   attach; always its own supervised engine. An engine another process still runs on this
 *   store (a tool started it) is an EmbeddedEngineInUseError naming its port, not a service
 *   that answers 503 once that process ends.
 */
export type OpenMode = 'tool' | 'service';

export class EmbeddedEngineInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddedEngineInUseError';
  }
}

/**
 * MONGODB_URI when set. Otherwise the embedded engine on DATA_DIR: see OpenMode.
 */
export async function openDatabase(
  config: Pick<AppConfig, 'mongodbUri' | 'mongodbDb' | 'dataDir' | 'mongodb'> & { tracing?: AppConfig['tracing'] },
  opts: {
    log?: (msg: string) => void;
    supervision?: Omit<EngineSupervisorOptions, 'dataDir'>;
    mode?: OpenMode;
    /** The port of an engine started here (EMBEDDED_MONGO_PORT; 0 or omitted: one the system picks); its restarts bind it again. */
    enginePort?: number;
  } = {},
): Promise<OpenDatabase> {
  const mode = opts.mode ?? 'tool';
  const log = opts.log ?? (() => {});
  // The driver's settings (MONGODB_APP_NAME, MONGODB_SERVER_SELECTION_TIMEOUT_MS, MONGODB_MAX_POOL_SIZE).
  const driver = {
    appName: config.mongodb.appName,
    serverSelectionTimeoutMS: config.mongodb.serverSelectionTimeoutMs,
    maxPoolSize: config.mongodb.maxPoolSize,
    // The driver reports each command when traces are on: lib/tracing/mongodb-spans.ts makes them spans.
    ...(config.tracing?.endpoint ? { driver: { monitorCommands: true } } : {}),
  };
  if (config.mongodbUri) {
    const { client, db } = await connectMongo(config.mongodbUri, config.mongodbDb, driver);
    return { client, db, engine: null, supervisor: null, embedded: false, health: HEALTHY, close: () => client.close() };
  }
  const dataDir = path.resolve(config.dataDir);
  const existingPort = Number(await readFile(portFile(dataDir), 'utf8').catch(() => ''));
  if (Number.isInteger(existingPort) && existingPort > 0) {
    const uri = `mongodb://127.0.0.1:${existingPort}/`;
    const reach = () => connectMongo(uri, config.mongodbDb, { ...driver, serverSelectionTimeoutMS: 1500 }).catch(() => null);
    if (mode === 'tool') {
      const attached = await reach();
      if (attached) {
        log(`using the embedded MongoDB already running on port ${existingPort}`);
        return {
          client: attached.client,
          db: attached.db,
          engine: null,
          supervisor: null,
          embedded: true,
          health: HEALTHY,
          close: () => attached.client.close(),
        };
      }
      // stale port file: the engine that wrote it is gone
    } else {
      // The engine of a service killed a moment ago exits by itself (it watches its parent's pipe): give it time.
      const until = Date.now() + ORPHAN_ENGINE_GRACE_MS;
      for (;;) {
        const other = await reach();
        if (!other) break;
        await other.client.close();
        if (Date.now() >= until) {
          throw new EmbeddedEngineInUseError(
            `DATA_DIR ${dataDir}: an embedded engine started by another process (a CLI tool such as npm run seed or npm run import) is running on this store, port ${existingPort} (${portFile(dataDir)}): let it finish, then start the service`,
          );
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }
  await mkdir(dataDir, { recursive: true });
  log(`starting embedded MongoDB (mongo-java-server, data in ${dataDir})`);
  const engine = await startEmbeddedMongo({ dataDir, port: opts.enginePort ?? 0 });
  await writeFile(portFile(dataDir), String(engine.port));
  const supervisor = new EngineSupervisor(engine, { ...opts.supervision, dataDir });
  const { client, db } = await connectMongo(engine.uri, config.mongodbDb, driver).catch(async (err: unknown) => {
    await supervisor.stop();
    throw err;
  });
  return {
    client,
    db,
    engine,
    supervisor,
    embedded: true,
    health: engineHealth(supervisor),
    // The engine last: the client's pending operations end first, then the engine commits and exits.
    async close() {
      await client.close();
      await supervisor.stop();
      await rm(portFile(dataDir), { force: true });
    },
  };
}
