/**
 * The database of a process of scripts/ (`npm start`, the CLI tools): MONGODB_URI when set, else
 * the embedded engine on DATA_DIR, started here (launcher.ts) and supervised (supervisor.ts), or
 * the one a running `npm start` launched, attached through its port file (a tool's: OpenMode). The service itself
 * (handlers/app.ts, lib/) sees only the connected database (lib/db/client.ts `connectMongo`) and
 * the engine's health as callbacks (`health`, handed to buildApp by scripts/start.ts).
 */
import { readFile, writeFile, rm, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Db, MongoClient } from 'mongodb';
import { connectMongo } from '../../lib/db/client.ts';
import { EMBEDDED_STORE_FILE, EmbeddedMongoStartError, startEmbeddedMongo, type EmbeddedMongo } from './launcher.ts';
import { acquireToolLock, DataDirInUseError, lockHolder, SERVICE_LOCK_FILE, TOOL_LOCK_FILE, toolInUseMessage, type ServiceLock } from './data-dir.ts';
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
/** How long a tool waits for a running service's engine to answer (the service starting it, or restarting it) before refusing. */
const SERVICE_ENGINE_WAIT_MS = 60_000;
/** The exit code of a tool refused because DATA_DIR is in use (the tools' code for a usage or environment error). */
export const IN_USE_EXIT_CODE = 2;

/**
 * Who opens the database, for the embedded engine on DATA_DIR:
 * - `tool` (the default: `npm run apikey`, `import`, `rollups`, `seed`, `worker`): attach to the
 *   engine of a running `npm start` (it holds DATA_DIR/service.lock; its port is in DATA_DIR; its
 *   engine outlives the tool), so the tools work beside the service. Without a live service, run
 *   an engine of its own, holding DATA_DIR/tool.lock (scripts/embedded-mongo/data-dir.ts) until
 *   close(). Never attach to another tool's engine (it stops when that tool ends, under whoever
 *   attached): when a live tool holds tool.lock, or the store is locked by another process, the
 *   tool prints one line (`DATA_DIR /x is in use by another tool (npm run import, PID 1234): …`)
 *   on stderr and exits IN_USE_EXIT_CODE, no stack trace.
 * - `service` (`npm start`, which holds DATA_DIR/service.lock, scripts/embedded-mongo/data-dir.ts): never
 *   attach; always its own supervised engine. An engine another process still runs on this
 *   store (a tool started it) is an EmbeddedEngineInUseError naming it, not a service
 *   that answers 503 once that process ends.
 */
export type OpenMode = 'tool' | 'service';

export class EmbeddedEngineInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmbeddedEngineInUseError';
  }
}

/** How the running tool is called in a refusal: `npm run import` for scripts/import.ts (or its bundle). */
function toolCommand(): string {
  const script = process.argv[1] ?? '';
  const name = /(?:^|[\\/])scripts[\\/](\w+)\.(?:ts|mjs|js)$/.exec(script)?.[1];
  if (name) return name === 'start' ? 'npm start' : `npm run ${name}`;
  return script ? `node ${path.basename(script)}` : 'a CLI tool';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isStoreLocked = (err: unknown) => err instanceof EmbeddedMongoStartError && /file is locked|locked by another process/i.test(err.stderrTail);

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
  const readPort = async () => {
    const port = Number(await readFile(portFile(dataDir), 'utf8').catch(() => ''));
    return Number.isInteger(port) && port > 0 ? port : null;
  };
  const reach = (port: number) =>
    connectMongo(`mongodb://127.0.0.1:${port}/`, config.mongodbDb, { ...driver, serverSelectionTimeoutMS: 1500 }).catch(() => null);
  let toolLock: ServiceLock | null = null;
  if (mode === 'tool') {
    try {
      for (let round = 1; ; round++) {
        const attached = await attachToService(dataDir, readPort, reach);
        if (attached) {
          log(`using the embedded MongoDB already running on port ${attached.port}`);
          const { client, db } = attached;
          return { client, db, engine: null, supervisor: null, embedded: true, health: HEALTHY, close: () => client.close() };
        }
        await mkdir(dataDir, { recursive: true });
        toolLock = acquireToolLock(dataDir, toolCommand());
        if (!lockHolder(dataDir, SERVICE_LOCK_FILE)) break;
        // A service started meanwhile: its engine, not a second one on the store.
        toolLock.release();
        toolLock = null;
        if (round >= 3) throw new DataDirInUseError(`DATA_DIR ${dataDir} is in use by a service that is starting or stopping: run the tool again`);
      }
    } catch (err) {
      if (err instanceof DataDirInUseError) refuse(err.message);
      throw err;
    }
  } else {
    // The engine of a service killed a moment ago exits by itself (it watches its parent's pipe): give
    // it time; so does a tool that found this service starting and is letting go of tool.lock.
    const until = Date.now() + ORPHAN_ENGINE_GRACE_MS;
    for (;;) {
      const tool = lockHolder(dataDir, TOOL_LOCK_FILE);
      const port = await readPort();
      const other = port === null ? null : await reach(port);
      await other?.client.close();
      if (!tool && !other) break;
      if (Date.now() >= until) {
        throw new EmbeddedEngineInUseError(
          tool
            ? `DATA_DIR ${dataDir}: a CLI tool (${tool.command ?? 'a CLI tool'}, PID ${tool.pid}) runs an embedded engine of its own on this store: let it finish, then start the service`
            : `DATA_DIR ${dataDir}: an embedded engine started by another process (a CLI tool such as npm run seed or npm run import) is running on this store, port ${port} (${portFile(dataDir)}): let it finish, then start the service`,
        );
      }
      await sleep(500);
    }
  }
  await mkdir(dataDir, { recursive: true });
  log(`starting embedded MongoDB (mongo-java-server, data in ${dataDir})`);
  let engine: EmbeddedMongo;
  try {
    engine = await startEmbeddedMongo({ dataDir, port: opts.enginePort ?? 0 });
  } catch (err) {
    toolLock?.release();
    // The store held by a process outside these locks (an orphaned engine that outlived the retries, an older tool).
    if (toolLock && isStoreLocked(err)) {
      const holder = lockHolder(dataDir, TOOL_LOCK_FILE);
      const service = lockHolder(dataDir, SERVICE_LOCK_FILE);
      refuse(
        holder
          ? toolInUseMessage(dataDir, holder)
          : service
            ? `DATA_DIR ${dataDir} is in use by a running service (PID ${service.pid}) that is starting its engine: run the tool again once it is up`
            : `DATA_DIR ${dataDir} is in use by another process (its store ${path.join(dataDir, EMBEDDED_STORE_FILE)} is locked): wait for it to finish, or run the tools one after another`,
      );
    }
    throw err;
  }
  await writeFile(portFile(dataDir), String(engine.port));
  const supervisor = new EngineSupervisor(engine, { ...opts.supervision, dataDir });
  const { client, db } = await connectMongo(engine.uri, config.mongodbDb, driver).catch(async (err: unknown) => {
    await supervisor.stop();
    toolLock?.release();
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
      toolLock?.release();
    },
  };
}

/** A tool's refusal of a DATA_DIR in use: one line on stderr, IN_USE_EXIT_CODE, no stack trace. */
function refuse(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(IN_USE_EXIT_CODE);
}

/**
 * The engine of the live service on DATA_DIR (service.lock), once it answers on its port, or null
 * when no service runs there (or it stopped meanwhile). Throws DataDirInUseError when another tool
 * runs an engine of its own there (tool.lock): never attached to, even while a service waits to start.
 */
async function attachToService(
  dataDir: string,
  readPort: () => Promise<number | null>,
  reach: (port: number) => Promise<{ client: MongoClient; db: Db } | null>,
): Promise<{ client: MongoClient; db: Db; port: number } | null> {
  const until = Date.now() + SERVICE_ENGINE_WAIT_MS;
  for (;;) {
    const tool = lockHolder(dataDir, TOOL_LOCK_FILE);
    if (tool) throw new DataDirInUseError(toolInUseMessage(dataDir, tool));
    const service = lockHolder(dataDir, SERVICE_LOCK_FILE);
    if (!service) return null;
    const port = await readPort();
    const attached = port === null ? null : await reach(port);
    if (attached) {
      // Still the service's engine (not one a tool started since on a store the service let go of).
      if (!lockHolder(dataDir, TOOL_LOCK_FILE) && lockHolder(dataDir, SERVICE_LOCK_FILE)) return { ...attached, port: port! };
      await attached.client.close();
      continue;
    }
    if (Date.now() >= until) {
      throw new DataDirInUseError(
        `DATA_DIR ${dataDir} is in use by a running service (PID ${service.pid}) whose embedded engine did not answer within ${SERVICE_ENGINE_WAIT_MS / 1000} s: run the tool again once it is up`,
      );
    }
    await sleep(500);
  }
}
