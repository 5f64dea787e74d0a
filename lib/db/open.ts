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

/**
 * MONGODB_URI when set. Otherwise the embedded engine on DATA_DIR: reuse the
 * one a running `npm start` launched (its port is in DATA_DIR), so CLI tools
 * like `npm run apikey` work beside the service, else start one.
 */
export async function openDatabase(
  config: Pick<AppConfig, 'mongodbUri' | 'mongodbDb' | 'dataDir'>,
  opts: { log?: (msg: string) => void; supervision?: Omit<EngineSupervisorOptions, 'dataDir'> } = {},
): Promise<OpenDatabase> {
  const log = opts.log ?? (() => {});
  if (config.mongodbUri) {
    const { client, db } = await connectMongo(config.mongodbUri, config.mongodbDb);
    return { client, db, engine: null, supervisor: null, embedded: false, close: () => client.close() };
  }
  const dataDir = path.resolve(config.dataDir);
  const existingPort = Number(await readFile(portFile(dataDir), 'utf8').catch(() => ''));
  if (Number.isInteger(existingPort) && existingPort > 0) {
    try {
      const { client, db } = await connectMongo(`mongodb://127.0.0.1:${existingPort}/`, config.mongodbDb, { serverSelectionTimeoutMS: 1500 });
      log(`using the embedded MongoDB already running on port ${existingPort}`);
      return { client, db, engine: null, supervisor: null, embedded: true, close: () => client.close() };
    } catch {
      // stale port file: the engine that wrote it is gone
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
