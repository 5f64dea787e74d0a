import { readFile, writeFile, rm, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Db, MongoClient } from 'mongodb';
import { connectMongo } from './client.ts';
import { startEmbeddedMongo, type EmbeddedMongo } from './embedded.ts';
import { EngineSupervisor, type EngineSupervisorOptions } from './engine-supervisor.ts';
import type { AppConfig } from '../config.ts';

export interface OpenDatabase {
  client: MongoClient;
  db: Db;
  /** Set when this process started the embedded engine (and must stop it): the first engine. */
  engine: EmbeddedMongo | null;
  /** Set when this process started the embedded engine: restarts it if it dies (lib/db/engine-supervisor.ts). */
  supervisor: EngineSupervisor | null;
  /** Whether the database is the embedded engine (demo data may be loaded). */
  embedded: boolean;
  close(): Promise<void>;
}

const portFile = (dataDir: string) => path.join(dataDir, 'embedded-mongo.port');
/** How long a service waits for an engine still answering on DATA_DIR's port to go away before refusing to start. */
const ORPHAN_ENGINE_GRACE_MS = 15_000;

/**
 * Who opens the database, for the embedded engine on DATA_DIR:
 * - `tool` (the default: `npm run apikey`, `import`, `seed`, `worker`): attach to the engine a
 *   running `npm start` launched (its port is in DATA_DIR), so the tools work beside the
 *   service; else start one for the tool's own run.
 * - `service` (`npm start`, which holds DATA_DIR/service.lock, lib/db/data-dir.ts): never
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
  config: Pick<AppConfig, 'mongodbUri' | 'mongodbDb' | 'dataDir'>,
  opts: { log?: (msg: string) => void; supervision?: Omit<EngineSupervisorOptions, 'dataDir'>; mode?: OpenMode } = {},
): Promise<OpenDatabase> {
  const mode = opts.mode ?? 'tool';
  const log = opts.log ?? (() => {});
  if (config.mongodbUri) {
    const { client, db } = await connectMongo(config.mongodbUri, config.mongodbDb);
    return { client, db, engine: null, supervisor: null, embedded: false, close: () => client.close() };
  }
  const dataDir = path.resolve(config.dataDir);
  const existingPort = Number(await readFile(portFile(dataDir), 'utf8').catch(() => ''));
  if (Number.isInteger(existingPort) && existingPort > 0) {
    const uri = `mongodb://127.0.0.1:${existingPort}/`;
    const reach = () => connectMongo(uri, config.mongodbDb, { serverSelectionTimeoutMS: 1500 }).catch(() => null);
    if (mode === 'tool') {
      const attached = await reach();
      if (attached) {
        log(`using the embedded MongoDB already running on port ${existingPort}`);
        return { client: attached.client, db: attached.db, engine: null, supervisor: null, embedded: true, close: () => attached.client.close() };
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
  const engine = await startEmbeddedMongo({ dataDir });
  await writeFile(portFile(dataDir), String(engine.port));
  const supervisor = new EngineSupervisor(engine, { ...opts.supervision, dataDir });
  const { client, db } = await connectMongo(engine.uri, config.mongodbDb).catch(async (err: unknown) => {
    await supervisor.stop();
    throw err;
  });
  return {
    client,
    db,
    engine,
    supervisor,
    embedded: true,
    // The engine last: the client's pending operations end first, then the engine commits and exits.
    async close() {
      await client.close();
      await supervisor.stop();
      await rm(portFile(dataDir), { force: true });
    },
  };
}
