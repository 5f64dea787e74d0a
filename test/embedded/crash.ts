/**
 * Crash safety of the on-disk engine's indexes (issue 25): the engine is killed (SIGKILL) in the
 * middle of the demo seed (scripts/demo/load.ts, as `npm run seed` runs it) while a probe writes one
 * acknowledged document every few milliseconds; started again on the same store:
 * - every secondary index agrees with its collection: the validate command checks each one
 *   against every document, and for a sample of documents the on-disk engine's planned look-ups
 *   (equality on each prefix of the index's fields, a range on its first) return what the
 *   in-memory engine finds by scanning the same documents;
 * - no acknowledged write older than the commit window is lost.
 */
import type { Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MongoClient, type Db, type Document } from 'mongodb';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { ensureIndexes } from '../../lib/service-indexes.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { loadDemoData } from '../../scripts/demo/load.ts';

export default async function crashTests(t: Test): Promise<void> {
  t.setTimeout(240_000);

  /**
   * Acknowledged writes older than this before the kill must survive it (docs/reliability.md): the
   * store commits every 200 ms between whole operations, and a commit waits for the operations in
   * flight (one document of an insert batch, with its index entries: an insert is one operation per
   * document) before writing the pages changed since the previous one. The interval plus one commit
   * is the window; this allowance is that window with room for this shared 2-core machine's load.
   */
  const COMMIT_WINDOW_ALLOWANCE_MS = 1000;
  const SAMPLES_PER_INDEX = 3;
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'embedded-crash-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));

  async function connect(uri: string): Promise<{ client: MongoClient; db: Db }> {
    const client = new MongoClient(uri, { serverSelectionTimeoutMS: 3000, directConnection: true });
    await client.connect();
    return { client, db: client.db('crash') };
  }

  /** The first scalar at a dotted path (through arrays), or undefined. */
  function valueAt(node: unknown, parts: string[]): unknown {
    if (Array.isArray(node)) {
      for (const element of node) {
        const v = valueAt(element, parts);
        if (v !== undefined) return v;
      }
      return undefined;
    }
    if (parts.length === 0) return node !== null && typeof node === 'object' && !(node instanceof Date) && !('_bsontype' in node) ? undefined : node;
    if (node === null || typeof node !== 'object') return undefined;
    return valueAt((node as Record<string, unknown>)[parts[0]!], parts.slice(1));
  }

  const ids = (docs: Document[]) => docs.map((d) => String(d._id)).sort();

  t.test('kill -9 during a seed: indexes agree with their collections, acknowledged writes kept', async (t) => {
    const engine = await startEmbeddedMongo({ dataDir, shortLived: true });
    const { client, db } = await connect(engine.uri);
    await ensureIndexes(db);
    const acks = db.collection<{ _id: number; at: Date }>('acks');
    await acks.createIndex({ at: -1 });

    const seedStarted = Date.now();
    const seeding = loadDemoData(db, { invoices: 20_000, trips: 3000, seed: 25, drop: false }).then(
      // trips first, then invoices
      () => 'finished',
      (err: Error) => err.message,
    );
    const acked: Array<{ id: number; at: number }> = [];
    let killed = false;
    const probe = (async () => {
      for (let id = 1; !killed; id++) {
        const ok = await acks.insertOne({ _id: id, at: new Date() }).then(
          () => true,
          () => false,
        );
        if (ok && !killed) acked.push({ id, at: Date.now() });
        await sleep(5);
      }
    })();
    // Kill once the trips and some of the invoices are in (the invoices' indexes being written with them)
    // and the probe has had acknowledged writes to lose: on a loaded machine each probe write waits on the
    // on-disk commit, and once the seed reached 1,500 invoices after only 12 of them.
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline && ((await financialDocs(db).estimatedDocumentCount()) < 1500 || acked.length <= 20)) await sleep(50);
    const killAt = Date.now();
    const phase = (what: string, since: number) =>
      t.comment(
        `${what}: ${Date.now() - since} ms (load average ${os
          .loadavg()
          .map((l) => l.toFixed(1))
          .join(', ')})`,
      );
    phase('seeding up to the kill', seedStarted);
    killed = true;
    engine.kill();
    const exit = await engine.exited;
    t.equal(exit.signal, 'SIGKILL', 'engine killed');
    t.not(await seeding, 'finished', 'the seed was cut short');
    await probe;
    await client.close(true);

    const restarted = await startEmbeddedMongo({ dataDir, shortLived: true });
    t.teardown(() => restarted.stop());
    const after = await connect(restarted.uri);
    t.teardown(() => after.client.close());

    const present = new Set(
      (
        await after.db
          .collection<{ _id: number }>('acks')
          .find({}, { projection: { _id: 1 } })
          .toArray()
      ).map((d) => d._id),
    );
    const lost = acked.filter((a) => !present.has(a.id));
    const oldestLostMs = lost.length ? killAt - Math.min(...lost.map((a) => a.at)) : 0;
    t.comment(`${acked.length} acknowledged probe writes, ${lost.length} lost (the oldest acknowledged ${oldestLostMs} ms before the kill)`);
    t.ok(acked.length > 20, 'the probe wrote during the seed');
    t.same(
      lost.filter((a) => a.at < killAt - COMMIT_WINDOW_ALLOWANCE_MS),
      [],
      `nothing acknowledged ${COMMIT_WINDOW_ALLOWANCE_MS} ms before the kill is lost`,
    );

    phase('restart and probe check', killAt);
    const checksStarted = Date.now();
    const memory = await startEmbeddedMongo({ shortLived: true });
    t.teardown(() => memory.stop());
    const scan = await connect(memory.uri);
    t.teardown(() => scan.client.close());

    const names = (await after.db.listCollections().toArray()).map((c) => c.name).sort();
    let checkedIndexes = 0;
    const asked = new Set<string>(); // the same look-up once
    for (const name of names) {
      const validation = await after.db.command({ validate: name, full: true });
      t.equal(validation.valid, true, `${name}: validate finds every index agreeing with the documents ${JSON.stringify(validation.errors ?? [])}`);
      const indexes = (await after.db.collection(name).listIndexes().toArray()).filter((i) => i.name !== '_id_');
      if (indexes.length === 0) continue;
      const docs = await after.db.collection(name).find({}).toArray(); // no condition: a scan of the store
      t.equal(docs.length, await after.db.collection(name).countDocuments({}), `${name}: the scan reads every document`);
      if (docs.length === 0) continue;
      await scan.db.collection(name).insertMany(docs);
      for (const index of indexes) {
        checkedIndexes++;
        const fields = Object.keys(index.key as Record<string, number>);
        for (let s = 0; s < SAMPLES_PER_INDEX; s++) {
          const sample = docs[Math.floor(((s + 0.5) * docs.length) / SAMPLES_PER_INDEX)]!;
          const query: Record<string, unknown> = {};
          for (const field of fields) {
            const value = valueAt(sample, field.split('.'));
            if (value === undefined) break;
            query[field] = value;
            const key = `${name} ${JSON.stringify(query)}`;
            if (asked.has(key)) continue;
            asked.add(key);
            const [onDisk, scanned] = await Promise.all([after.db.collection(name).find(query).toArray(), scan.db.collection(name).find(query).toArray()]);
            t.same(ids(onDisk), ids(scanned), `${name} ${index.name} ${JSON.stringify(query)}: ${scanned.length} documents`, { diagnostic: false });
            const [count, scannedCount] = await Promise.all([after.db.collection(name).countDocuments(query), scan.db.collection(name).countDocuments(query)]);
            t.equal(count, scannedCount, `${name} ${index.name} ${JSON.stringify(query)}: count`, { diagnostic: false });
          }
          const first = valueAt(sample, fields[0]!.split('.'));
          if (first !== undefined) {
            const range = { [fields[0]!]: { $gte: first } };
            if (asked.has(`${name} ${JSON.stringify(range)}`)) continue;
            asked.add(`${name} ${JSON.stringify(range)}`);
            const [count, scannedCount] = await Promise.all([after.db.collection(name).countDocuments(range), scan.db.collection(name).countDocuments(range)]);
            t.equal(count, scannedCount, `${name} ${index.name} ${JSON.stringify(range)}: count`, { diagnostic: false });
          }
        }
      }
    }
    phase(`${asked.size} look-ups on both engines`, checksStarted);
    t.ok(checkedIndexes >= 5, `${checkedIndexes} indexes compared with scans`);
  });
}
