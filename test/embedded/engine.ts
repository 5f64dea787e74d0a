/**
 * Proves what the project relies on from the embedded MongoDB-compatible engine
 * (mongo-java-server 1.47.0 via scripts/embedded-mongo/launcher.ts) with the real mongodb 6.22 driver.
 *
 * Known gaps of the engine (checked by hand, deliberately NOT asserted here; see the
 * engine notes in the embedded-engine report): partialFilterExpression on unique indexes is
 * ignored (uniqueness applies to every document), non-unique secondary and TTL indexes are
 * accepted but are no-ops (TTL never expires anything), collation is accepted and ignored,
 * no sessions/transactions, no change streams, no update-with-aggregation-pipeline,
 * $lookup with let/pipeline, $set/$replaceWith/$unionWith/$setWindowFields/$bucketAuto stages,
 * $round/$switch/$let/$type/$trim/$regexMatch/$dateFromString/$dateTrunc/$dateAdd/$dateDiff
 * expressions, and $stdDevPop/$count/$top/$firstN/$mergeObjects accumulators.
 */
import type { Test } from 'tap';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Agenda } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import {
  startEmbeddedMongo,
  defaultStartTimeoutMs,
  classArchiveArgs,
  DEFAULT_EMBEDDED_MONGO_JAR,
  DEFAULT_ENGINE_CLASS_ARCHIVE,
  DEFAULT_ENGINE_HEAP_MB,
  EMBEDDED_STORE_FILE,
  exitReason,
  type EmbeddedMongo,
} from '../../scripts/embedded-mongo/launcher.ts';
import type { Document } from 'mongodb';
import { connectMongo } from '../../lib/db/client.ts';

export default async function engineTests(t: Test): Promise<void> {
  interface Item {
    sku: string;
    qty: number;
  }
  interface Doc {
    _id: number;
    tenant: string;
    total: number;
    status: string;
    items: Item[];
    issuedAt: Date;
    carrierId?: string;
    note?: string | null;
  }

  const DOCS: Doc[] = [
    {
      _id: 1,
      tenant: 'a',
      total: 10,
      status: 'paid',
      items: [
        { sku: 'x', qty: 2 },
        { sku: 'y', qty: 5 },
      ],
      issuedAt: new Date('2024-01-15T10:00:00Z'),
      carrierId: 'c1',
    },
    { _id: 2, tenant: 'a', total: 20, status: 'open', items: [{ sku: 'x', qty: 7 }], issuedAt: new Date('2024-02-01T00:00:00Z'), carrierId: 'c2' },
    { _id: 3, tenant: 'b', total: 30, status: 'paid', items: [], issuedAt: new Date('2024-02-20T12:00:00Z'), carrierId: 'c1', note: null },
    { _id: 4, tenant: 'a', total: 40, status: 'void', items: [{ sku: 'z', qty: 1 }], issuedAt: new Date('2024-03-05T00:00:00Z') },
  ];

  t.test('in-memory engine with the real driver', async (t) => {
    const t0 = performance.now();
    const engine = await startEmbeddedMongo({});
    const startMs = Math.round(performance.now() - t0);
    t.teardown(() => engine.stop());
    t.comment(`embedded engine (memory backend) listening in ${startMs} ms at ${engine.uri}`);
    t.match(engine.uri, /^mongodb:\/\/127\.0\.0\.1:\d+\/$/);
    t.ok(engine.port > 0, 'ephemeral port assigned');

    const { client, db } = await connectMongo(engine.uri, 'engine_test');
    t.teardown(() => client.close());
    const docs = db.collection<Doc>('docs');
    await docs.insertMany(DOCS);
    await db.collection<{ _id: string; name: string }>('carriers').insertMany([
      { _id: 'c1', name: 'Uno' },
      { _id: 'c2', name: 'Dos' },
    ]);

    t.test('handshake reports a wire version the driver accepts', async (t) => {
      const hello = await db.admin().command({ isMaster: 1 });
      t.ok(hello.maxWireVersion >= 8, `maxWireVersion ${hello.maxWireVersion} >= 8 (driver 6.22 minimum)`);
      const info = await db.admin().command({ buildInfo: 1 });
      t.equal(info.version, '5.0.0');
    });

    t.test('find with sort/skip/limit', async (t) => {
      const ids = (await docs.find({}).sort({ total: -1 }).skip(1).limit(2).toArray()).map((d) => d._id);
      t.same(ids, [3, 2]);
      const proj = await docs.findOne({ _id: 1 }, { projection: { total: 1, 'items.sku': 1 } });
      t.same(proj, { _id: 1, total: 10, items: [{ sku: 'x' }, { sku: 'y' }] });
    });

    t.test('$elemMatch', async (t) => {
      const ids = (await docs.find({ items: { $elemMatch: { sku: 'x', qty: { $gt: 3 } } } }).toArray()).map((d) => d._id);
      t.same(ids, [2]);
    });

    // The engine answers "not equal" before copying both sides when their shapes differ
    // (Utils.nullAwareEquals): the answers MongoDB gives, by hand.
    t.test('equality of embedded documents and arrays', async (t) => {
      const c = db.collection<{ _id: number; sub?: unknown; arr?: unknown }>('shapes');
      await c.insertMany([
        { _id: 1, sub: { a: 1, b: 2 } },
        { _id: 2, sub: { a: 1, b: 2, c: 3 } },
        { _id: 3, sub: { a: 1 } },
        { _id: 4, sub: { a: 1.0, b: 2.0 } },
        { _id: 5, sub: { b: 2, a: 1 } },
        { _id: 6, arr: [1, 2] },
        { _id: 7, arr: [1, 2, 3] },
        { _id: 8, arr: [{ a: 1 }, { a: 1, b: 2 }] },
      ]);
      const ids = async (q: Document) => (await c.find(q).sort({ _id: 1 }).toArray()).map((d) => d._id);
      // Field order matters for embedded-document equality; 1 and 1.0 are equal numbers.
      t.same(await ids({ sub: { a: 1, b: 2 } }), [1, 4]);
      t.same(await ids({ sub: { a: 1 } }), [3]);
      t.same(await ids({ arr: [1, 2] }), [6]);
      t.same(await ids({ arr: { a: 1, b: 2 } }), [8]);
      t.same(await ids({ arr: { $elemMatch: { a: 1, b: { $exists: false } } } }), [8]);
      t.same(await ids({ arr: [2, 1] }), []);
    });

    t.test('$in', async (t) => {
      const ids = (
        await docs
          .find({ status: { $in: ['paid', 'void'] } })
          .sort({ _id: 1 })
          .toArray()
      ).map((d) => d._id);
      t.same(ids, [1, 3, 4]);
    });

    t.test('countDocuments', async (t) => {
      t.equal(await docs.countDocuments({ tenant: 'a' }), 3);
      t.equal(await docs.countDocuments({ tenant: 'a' }, { skip: 1, limit: 1 }), 1);
      t.equal(await docs.countDocuments({}), 4);
    });

    t.test('unique index is enforced with E11000', async (t) => {
      const keys = db.collection<{ tenant: string; key: string }>('uniq');
      await keys.createIndex({ tenant: 1, key: 1 }, { unique: true, name: 'tenant_key' });
      await keys.insertOne({ tenant: 'a', key: 'k' });
      await keys.insertOne({ tenant: 'b', key: 'k' });
      await t.rejects(keys.insertOne({ tenant: 'a', key: 'k' }), { code: 11000 }, 'duplicate insert');
      await t.rejects(keys.updateOne({ tenant: 'b', key: 'k' }, { $set: { tenant: 'a' } }), { code: 11000 }, 'update into a duplicate');
      await t.rejects(keys.updateOne({ tenant: 'a', key: 'new' }, { $set: { key: 'k' } }, { upsert: true }), { code: 11000 }, 'upsert into a duplicate');
      const names = (await keys.listIndexes().toArray()).map((i) => i.name);
      t.ok(names.includes('tenant_key'), 'listIndexes shows the unique index');
      t.equal(await keys.countDocuments(), 2);
    });

    t.test('findOneAndUpdate with upsert', async (t) => {
      const seq = db.collection<{ _id: string; n: number; createdAt?: Date }>('sequences');
      const first = await seq.findOneAndUpdate(
        { _id: 'invoice' },
        { $inc: { n: 1 }, $setOnInsert: { createdAt: new Date() } },
        { upsert: true, returnDocument: 'after' },
      );
      t.equal(first?.n, 1);
      t.ok(first?.createdAt instanceof Date);
      const second = await seq.findOneAndUpdate({ _id: 'invoice' }, { $inc: { n: 1 } }, { upsert: true, returnDocument: 'after' });
      t.equal(second?.n, 2);
      const before = await seq.findOneAndUpdate({ _id: 'invoice' }, { $inc: { n: 1 } }, { returnDocument: 'before' });
      t.equal(before?.n, 2);
      const missing = await seq.findOneAndUpdate({ _id: 'nope' }, { $inc: { n: 1 } });
      t.equal(missing, null);
      const generated = await db
        .collection<{ name: string; v?: number }>('sequences2')
        .findOneAndUpdate({ name: 'x' }, { $set: { v: 1 } }, { upsert: true, returnDocument: 'after' });
      t.match(generated, { name: 'x', v: 1 });
      t.ok(generated?._id, 'upsert generated an _id');
    });

    const agg = (pipeline: object[]) => docs.aggregate(pipeline).toArray();

    t.test('aggregate: $match, $addFields, $project', async (t) => {
      const out = await agg([
        { $match: { tenant: 'a' } },
        { $addFields: { double: { $multiply: ['$total', 2] } } },
        { $project: { _id: 1, double: 1, lines: { $size: '$items' } } },
        { $sort: { _id: 1 } },
      ]);
      t.same(out, [
        { _id: 1, double: 20, lines: 2 },
        { _id: 2, double: 40, lines: 1 },
        { _id: 4, double: 80, lines: 1 },
      ]);
    });

    t.test('aggregate: $group with $sum, $push, $first', async (t) => {
      const out = await agg([
        { $sort: { _id: 1 } },
        { $group: { _id: '$tenant', sum: { $sum: '$total' }, count: { $sum: 1 }, ids: { $push: '$_id' }, first: { $first: '$status' } } },
        { $sort: { _id: 1 } },
      ]);
      t.same(out, [
        { _id: 'a', sum: 70, count: 3, ids: [1, 2, 4], first: 'paid' },
        { _id: 'b', sum: 30, count: 1, ids: [3], first: 'paid' },
      ]);
    });

    t.test('aggregate: $unwind', async (t) => {
      const out = await agg([{ $unwind: '$items' }, { $project: { sku: '$items.sku' } }]);
      t.same(out, [
        { _id: 1, sku: 'x' },
        { _id: 1, sku: 'y' },
        { _id: 2, sku: 'x' },
        { _id: 4, sku: 'z' },
      ]);
      const kept = await agg([{ $unwind: { path: '$items', preserveNullAndEmptyArrays: true } }, { $count: 'n' }]);
      t.same(kept, [{ n: 5 }]);
    });

    t.test('aggregate: $lookup (localField/foreignField)', async (t) => {
      const out = await agg([
        { $lookup: { from: 'carriers', localField: 'carrierId', foreignField: '_id', as: 'carrier' } },
        { $project: { names: '$carrier.name' } },
        { $sort: { _id: 1 } },
      ]);
      t.same(out, [
        { _id: 1, names: ['Uno'] },
        { _id: 2, names: ['Dos'] },
        { _id: 3, names: ['Uno'] },
        { _id: 4, names: [] },
      ]);
    });

    t.test('aggregate: $facet with $sort, $skip, $limit', async (t) => {
      const out = await agg([
        { $match: { tenant: 'a' } },
        {
          $facet: {
            total: [{ $count: 'n' }],
            page: [{ $sort: { total: -1 } }, { $skip: 1 }, { $limit: 1 }, { $project: { _id: 1 } }],
          },
        },
      ]);
      t.same(out, [{ total: [{ n: 3 }], page: [{ _id: 2 }] }]);
    });

    t.test('aggregate: $sort, $skip, $limit', async (t) => {
      const out = await agg([{ $sort: { total: -1 } }, { $skip: 1 }, { $limit: 2 }, { $project: { _id: 1 } }]);
      t.same(out, [{ _id: 3 }, { _id: 2 }]);
    });

    t.test('aggregate: $cond and $ifNull', async (t) => {
      const out = await agg([
        {
          $project: {
            size: { $cond: [{ $gte: ['$total', 25] }, 'big', 'small'] },
            paid: { $cond: { if: { $eq: ['$status', 'paid'] }, then: 1, else: 0 } },
            carrier: { $ifNull: ['$carrierId', 'none'] },
            note: { $ifNull: ['$note', 'n/a'] },
          },
        },
        { $sort: { _id: 1 } },
      ]);
      t.same(out, [
        { _id: 1, size: 'small', paid: 1, carrier: 'c1', note: 'n/a' },
        { _id: 2, size: 'small', paid: 0, carrier: 'c2', note: 'n/a' },
        { _id: 3, size: 'big', paid: 1, carrier: 'c1', note: 'n/a' },
        { _id: 4, size: 'big', paid: 0, carrier: 'none', note: 'n/a' },
      ]);
      const sums = await agg([{ $group: { _id: null, paid: { $sum: { $cond: [{ $eq: ['$status', 'paid'] }, '$total', 0] } } } }]);
      t.same(sums, [{ _id: null, paid: 40 }]);
    });

    t.test('aggregate: $dateToString', async (t) => {
      const out = await agg([
        {
          $project: {
            day: { $dateToString: { format: '%Y-%m-%d', date: '$issuedAt' } },
            local: { $dateToString: { format: '%Y-%m-%dT%H:%M', date: '$issuedAt', timezone: 'America/Mexico_City' } },
          },
        },
        { $sort: { _id: 1 } },
      ]);
      t.same(out, [
        { _id: 1, day: '2024-01-15', local: '2024-01-15T04:00' },
        { _id: 2, day: '2024-02-01', local: '2024-01-31T18:00' },
        { _id: 3, day: '2024-02-20', local: '2024-02-20T06:00' },
        { _id: 4, day: '2024-03-05', local: '2024-03-04T18:00' },
      ]);
      const monthly = await agg([
        { $group: { _id: { $dateToString: { format: '%Y-%m', date: '$issuedAt' } }, total: { $sum: '$total' } } },
        { $sort: { _id: 1 } },
      ]);
      t.same(monthly, [
        { _id: '2024-01', total: 10 },
        { _id: '2024-02', total: 50 },
        { _id: '2024-03', total: 40 },
      ]);
    });

    // A stored value is data, never an expression: MongoDB answers these with the strings as stored
    // (the engine evaluated each element of the input again: "$$VIP" failed as an undefined variable).
    t.test('aggregate: $map, $filter and $reduce read their elements as values', async (t) => {
      const texts = db.collection<{ _id: number; x: number; words: string[]; lines: { d: string; n: number }[] }>('texts');
      await texts.insertOne({
        _id: 1,
        x: 7,
        words: ['$x', '$$VIP', 'plain'],
        lines: [
          { d: '$x', n: 1 },
          { d: '$$ROOT', n: 2 },
        ],
      });
      const [out] = await texts
        .aggregate([
          {
            $project: {
              _id: 0,
              same: { $map: { input: '$words', as: 'w', in: '$$w' } },
              kept: { $filter: { input: '$words', as: 'w', cond: { $ne: ['$$w', 'plain'] } } },
              joined: { $reduce: { input: '$words', initialValue: '', in: { $concat: ['$$value', '$$this'] } } },
              ds: { $map: { input: '$lines', as: 'l', in: '$$l.d' } },
              lines: { $filter: { input: '$lines', as: 'l', cond: { $gte: ['$$l.n', 2] } } },
              nested: { $map: { input: '$lines', as: 'l', in: { $map: { input: '$words', as: 'w', in: { $concat: ['$$l.d', '$$w'] } } } } },
              roots: { $map: { input: '$lines', as: 'l', in: '$$ROOT.x' } },
              // An array literal is an expression: its elements are evaluated, once.
              literal: { $map: { input: ['$x', 2, '$words'], as: 'v', in: '$$v' } },
            },
          },
        ])
        .toArray();
      t.same(out, {
        same: ['$x', '$$VIP', 'plain'],
        kept: ['$x', '$$VIP'],
        joined: '$x$$VIPplain',
        ds: ['$x', '$$ROOT'],
        lines: [{ d: '$$ROOT', n: 2 }],
        nested: [
          ['$x$x', '$x$$VIP', '$xplain'],
          ['$$ROOT$x', '$$ROOT$$VIP', '$$ROOTplain'],
        ],
        roots: [7, 7],
        literal: [7, 2, ['$x', '$$VIP', 'plain']],
      });
      // $$ROOT inside the operators is the document, without the variables they bind.
      const [root] = await texts.aggregate([{ $project: { _id: 0, r: { $map: { input: [1], as: 'one', in: '$$ROOT' } } } }]).toArray();
      t.same(Object.keys(root?.r?.[0] ?? {}), ['_id', 'x', 'words', 'lines']);
    });

    // What a stage's expression yields is a value, objects included: MongoDB answers each of these
    // with the strings as stored. The engine evaluated every field of an object a stage produced a
    // second time ("$b" read as the field b, "$$ROOT diesel" an undefined variable), and $sum of an
    // array and $convert their values again; an array literal's elements it never evaluated.
    t.test('aggregate: the objects a stage produces hold values, never expressions', async (t) => {
      type Doc = { _id: number; n: number; a: string; b: string; r: string; c: string; sub: Document; sarr: unknown[]; arr: unknown[] };
      const coll = db.collection<Doc>('stage-values');
      const sub = { k: '$b', r: '$$ROOT', deep: { z: '$b' } };
      const stored: Doc = { _id: 1, n: 5, a: '$b', b: 'B', r: '$$ROOT diesel', c: '$$CURRENT.a', sub, sarr: ['$$ROOT diesel', '$n', 3], arr: ['$a'] };
      await coll.insertOne(stored);
      const one = async (pipeline: Document[]) => (await coll.aggregate(pipeline).toArray())[0];

      t.same(await one([{ $project: { _id: 0, x: '$sub', o: { x: '$a', y: '$r' }, l: { $literal: { k: '$b' } } } }]), {
        x: sub,
        o: { x: '$b', y: '$$ROOT diesel' },
        l: { k: '$b' },
      });
      t.same(await one([{ $project: { _id: 0, c: { $cond: [true, { k: '$a' }, null] }, i: { $ifNull: ['$nope', '$sub'] } } }]), { c: { k: '$b' }, i: sub });
      t.same(await one([{ $addFields: { root: '$$ROOT' } }, { $project: { _id: 0, root: 1 } }]), { root: stored });
      t.same(await one([{ $replaceRoot: { newRoot: '$sub' } }]), sub);
      t.same(await one([{ $group: { _id: { k: '$a', r: '$r', c: '$c' }, subs: { $push: '$sub' }, roots: { $push: '$$ROOT' }, o: { $first: { k: '$a' } } } }]), {
        _id: { k: '$b', r: '$$ROOT diesel', c: '$$CURRENT.a' },
        subs: [sub],
        roots: [stored],
        o: { k: '$b' },
      });
      t.same(await one([{ $facet: { g: [{ $group: { _id: { s: '$sub' } } }] } }]), { g: [{ _id: { s: sub } }] });
      // A field whose expression is missing is left out of the object, at any depth.
      t.same(await one([{ $project: { _id: 0, o: { x: '$nope', p: { y: '$nope', n: '$n' } } } }]), { o: { p: { n: 5 } } });
      // $sum of an array sums its numbers as they are; an array literal's elements are expressions.
      t.same(await one([{ $project: { _id: 0, s: { $sum: '$sarr' }, t: { $sum: [['$n', 2]] }, c: { $concatArrays: ['$arr', ['$n', '$a']] } } }]), {
        s: 3,
        t: 7,
        c: ['$a', 5, '$b'],
      });
      t.same(await one([{ $project: { _id: 0, v: { $convert: { input: '$a', to: 'string' } }, e: { $convert: { input: '$a', to: 'int', onError: 'E' } } } }]), {
        v: '$b',
        e: 'E',
      });
      // A later stage changing a copied subdocument leaves the stored document alone.
      t.same(await one([{ $project: { _id: 0, s: '$sub' } }, { $addFields: { s: { extra: 'x' } } }]), { s: { ...sub, extra: 'x' } });
      t.same(await coll.findOne({ _id: 1 }), stored);
    });

    t.test('Agenda 6 + MongoBackend on the engine', async (t) => {
      // Agenda keeps a ref'd "is the job still alive" timer of lockLifetime/2 (default 5 min) per run,
      // even after stop(); a short lock lifetime keeps this test process from hanging on it.
      const agenda = new Agenda({ backend: new MongoBackend({ mongo: db }), processEvery: 100, defaultLockLifetime: 2_000 });
      const errors: Error[] = [];
      agenda.on('error', (err: Error) => errors.push(err));

      const runs: Array<{ carrierId: string }> = [];
      let resolveRan!: () => void;
      const ran = new Promise<void>((resolve) => (resolveRan = resolve));
      agenda.define<{ carrierId: string }>('alert-check', async (job) => {
        runs.push(job.attrs.data);
        resolveRan();
      });

      await agenda.start();
      t.teardown(() => agenda.stop());

      const first = await agenda.create('alert-check', { carrierId: 'c1' }).unique({ 'data.carrierId': 'c1' }).schedule(new Date()).save();
      const again = await agenda.create('alert-check', { carrierId: 'c1' }).unique({ 'data.carrierId': 'c1' }).schedule(new Date()).save();
      t.ok(first.attrs._id, 'job saved with an id');
      t.equal(String(again.attrs._id), String(first.attrs._id), 'unique() upserted the same job');

      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        ran,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('agenda job did not run within 15 s')), 15_000);
        }),
      ]).finally(() => clearTimeout(timer));
      t.same(runs[0], { carrierId: 'c1' }, 'job ran with its data');

      // wait for agenda to persist the finished state
      const deadline = Date.now() + 5_000;
      let stored = await db.collection('agendaJobs').findOne({ name: 'alert-check' });
      while (!stored?.lastFinishedAt && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        stored = await db.collection('agendaJobs').findOne({ name: 'alert-check' });
      }
      t.equal(await db.collection('agendaJobs').countDocuments({ name: 'alert-check' }), 1, 'one stored job');
      t.ok(stored?.lastFinishedAt instanceof Date, 'lastFinishedAt persisted');
      t.same(errors, [], 'agenda emitted no errors');
    });
  });

  t.test('on-disk engine keeps data across restarts on the same port', async (t) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'embedded-mongo-test-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));

    const t0 = performance.now();
    let engine: EmbeddedMongo = await startEmbeddedMongo({ dataDir });
    t.comment(`embedded engine (H2 backend) listening in ${Math.round(performance.now() - t0)} ms`);
    const port = engine.port;
    let { client, db } = await connectMongo(engine.uri, 'persist_test');
    await db.collection('trips').createIndex({ tenant: 1, ref: 1 }, { unique: true, name: 'tenant_ref' });
    await db.collection('trips').insertMany([
      { tenant: 't1', ref: 'A-1', km: 120 },
      { tenant: 't1', ref: 'A-2', km: 80 },
    ]);
    await client.close();
    await engine.stop();
    await engine.stop(); // idempotent

    const t1 = performance.now();
    engine = await startEmbeddedMongo({ dataDir, port });
    t.comment(`restart on port ${port} in ${Math.round(performance.now() - t1)} ms`);
    t.equal(engine.port, port, 'restarted on the same port');
    ({ client, db } = await connectMongo(engine.uri, 'persist_test'));
    t.equal(await db.collection('trips').countDocuments({ tenant: 't1' }), 2, 'documents survived a clean restart');
    await t.rejects(db.collection('trips').insertOne({ tenant: 't1', ref: 'A-1' }), { code: 11000 }, 'unique index survived');

    // crash: SIGKILL after the background commit interval has passed
    await db.collection('trips').insertOne({ tenant: 't1', ref: 'A-3', km: 5 });
    await new Promise((r) => setTimeout(r, 1_000));
    await client.close();
    engine.kill();
    engine = await startEmbeddedMongo({ dataDir, port });
    t.teardown(() => engine.stop());
    ({ client, db } = await connectMongo(engine.uri, 'persist_test'));
    t.teardown(() => client.close());
    t.equal(await db.collection('trips').countDocuments({ tenant: 't1' }), 3, 'committed documents survived SIGKILL');
  });

  t.test('every start maps the class archive `npm run setup` wrote; another jar, or an older archive, is left alone', async (t) => {
    const archive = DEFAULT_ENGINE_CLASS_ARCHIVE;
    t.ok(existsSync(archive), `${archive} exists (written by \`npm run setup\`: scripts/engine-class-archive.ts)`);
    t.ok(statSync(archive).mtimeMs >= statSync(DEFAULT_EMBEDDED_MONGO_JAR).mtimeMs, 'written after the jar it was made from');
    const engine = await startEmbeddedMongo({});
    t.teardown(() => engine.stop());
    const { client, db } = await connectMongo(engine.uri, 'cds');
    t.teardown(() => client.close());
    await db.collection('x').insertOne({ a: 1 });
    t.equal(await db.collection('x').countDocuments({ a: 1 }), 1, 'the engine answers');
    const maps = await readFile(`/proc/${engine.pid}/maps`, 'utf8');
    t.ok(maps.includes(archive), 'the JVM has the archive mapped (the JDK accepted it)');
    t.same(classArchiveArgs(path.join(os.tmpdir(), 'another', 'embedded-mongo.jar')), [], 'EMBEDDED_MONGO_JAR elsewhere: no archive (it would not match)');
    t.match(
      classArchiveArgs(DEFAULT_EMBEDDED_MONGO_JAR).join(' '),
      new RegExp(`-XX:SharedArchiveFile=${archive.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
      'the default jar: the archive',
    );
  });

  t.test('start errors are clear', async (t) => {
    t.test('missing jar', async (t) => {
      const saved = process.env.EMBEDDED_MONGO_JAR;
      process.env.EMBEDDED_MONGO_JAR = path.join(os.tmpdir(), 'does-not-exist', 'embedded-mongo.jar');
      try {
        await t.rejects(startEmbeddedMongo({}), /npm run setup/);
      } finally {
        if (saved === undefined) delete process.env.EMBEDDED_MONGO_JAR;
        else process.env.EMBEDDED_MONGO_JAR = saved;
      }
    });

    t.test('missing java', async (t) => {
      const savedPath = process.env.PATH;
      const savedHome = process.env.JAVA_HOME;
      process.env.PATH = path.join(os.tmpdir(), 'no-java-here');
      delete process.env.JAVA_HOME;
      try {
        await t.rejects(startEmbeddedMongo({}), /Java not found/);
      } finally {
        process.env.PATH = savedPath;
        if (savedHome !== undefined) process.env.JAVA_HOME = savedHome;
      }
    });

    t.test('port already in use', async (t) => {
      const engine = await startEmbeddedMongo({});
      t.teardown(() => engine.stop());
      await t.rejects(startEmbeddedMongo({ port: engine.port, startTimeoutMs: 30_000 }), /exited before listening[\s\S]*(cannot bind|Address already in use)/);
    });

    t.test('an engine that makes no progress in time: the error says what to do', async (t) => {
      const err = await startEmbeddedMongo({ startTimeoutMs: 50 }).then(
        () => null,
        (e: Error) => e,
      );
      t.ok(err, 'rejected');
      t.match(err?.message, /made no progress for 0\.1 s/);
      t.match(err?.message, /EMBEDDED_MONGO_START_TIMEOUT_MS=120000/);
      t.match(err?.message, /MONGODB_URI/);
    });

    t.test('the engine heap is fixed (indexes live in the store), EMBEDDED_MONGO_XMX overrides it', async (t) => {
      const saved = process.env.EMBEDDED_MONGO_XMX;
      t.teardown(() => {
        if (saved === undefined) delete process.env.EMBEDDED_MONGO_XMX;
        else process.env.EMBEDDED_MONGO_XMX = saved;
      });
      t.ok(DEFAULT_ENGINE_HEAP_MB >= 1024 && DEFAULT_ENGINE_HEAP_MB <= 1536, `default ${DEFAULT_ENGINE_HEAP_MB} MB: 1 to 1.5 GB`);
      delete process.env.EMBEDDED_MONGO_XMX;
      const dir = await mkdtemp(path.join(os.tmpdir(), 'embedded-heap-'));
      t.teardown(() => rm(dir, { recursive: true, force: true }));
      const byDefault = await startEmbeddedMongo({ dataDir: dir });
      await byDefault.stop();
      t.equal(byDefault.maxHeap, `${DEFAULT_ENGINE_HEAP_MB}m`, 'on-disk engine: the fixed default');
      process.env.EMBEDDED_MONGO_XMX = '700m';
      const overridden = await startEmbeddedMongo({});
      await overridden.stop();
      t.equal(overridden.maxHeap, '700m', 'EMBEDDED_MONGO_XMX');
    });

    t.test('an engine out of memory exits at once, saying so and naming EMBEDDED_MONGO_XMX', async (t) => {
      t.equal(
        exitReason(
          'x\nembedded-mongo: out of memory: 93% of the last 10 s spent collecting garbage with a max heap of 48 MB; exiting. Give the engine more heap with EMBEDDED_MONGO_XMX (e.g. EMBEDDED_MONGO_XMX=2g)\n',
          '48m',
        ),
        'out of memory: 93% of the last 10 s spent collecting garbage with a max heap of 48 MB; exiting. Give the engine more heap with EMBEDDED_MONGO_XMX (e.g. EMBEDDED_MONGO_XMX=2g)',
        'the watchdog line',
      );
      t.match(
        exitReason('Terminating due to java.lang.OutOfMemoryError: Java heap space\n', '48m'),
        /max heap of 48m.*EMBEDDED_MONGO_XMX/,
        "the JVM's own exit",
      );
      t.equal(exitReason('embedded-mongo: error during shutdown\n', '48m'), undefined, 'anything else: no reason');

      // The in-memory backend keeps every document in the heap: a tiny heap and a stream of inserts exhaust it.
      const saved = process.env.EMBEDDED_MONGO_XMX;
      process.env.EMBEDDED_MONGO_XMX = '48m';
      let engine: EmbeddedMongo;
      try {
        engine = await startEmbeddedMongo({});
      } finally {
        if (saved === undefined) delete process.env.EMBEDDED_MONGO_XMX;
        else process.env.EMBEDDED_MONGO_XMX = saved;
      }
      t.teardown(() => engine.stop());
      const { client, db } = await connectMongo(engine.uri, 'oom_test');
      t.teardown(() => client.close(true));
      const started = Date.now();
      const padding = 'x'.repeat(4096);
      let exited = false;
      void engine.exited.then(() => (exited = true));
      for (let batch = 0; !exited && Date.now() - started < 90_000; batch++) {
        const docs = Array.from({ length: 200 }, (_, i) => ({ _id: `${batch}-${i}`, padding }));
        await db
          .collection<{ _id: string; padding: string }>('filler')
          .insertMany(docs)
          .catch(() => undefined);
      }
      // unref: a pending 30 s timer would keep this test process alive for 30 s after the engine exited.
      const exit = await Promise.race([engine.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 30_000).unref())]);
      t.ok(exit, `the engine exited (${Date.now() - started} ms after the first insert)`);
      t.equal(exit?.expected, false, 'not asked to');
      t.match(exit?.reason, /out of memory.*EMBEDDED_MONGO_XMX/, `reason: ${exit?.reason}`);
    });

    t.test('the start timeout follows the store size, or EMBEDDED_MONGO_START_TIMEOUT_MS', async (t) => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'embedded-timeout-'));
      t.teardown(() => rm(dir, { recursive: true, force: true }));
      t.equal(defaultStartTimeoutMs(dir, {}), 60_000, 'no store yet: 60 s');
      await writeFile(path.join(dir, EMBEDDED_STORE_FILE), '');
      await truncate(path.join(dir, EMBEDDED_STORE_FILE), 2 * 1024 ** 3); // sparse: no real 2 GB written
      t.equal(defaultStartTimeoutMs(dir, {}), 180_000, '2 GB store: 60 s + 60 s per GB');
      t.equal(defaultStartTimeoutMs(dir, { EMBEDDED_MONGO_START_TIMEOUT_MS: '300000' }), 300_000, 'configured');
      t.throws(() => defaultStartTimeoutMs(dir, { EMBEDDED_MONGO_START_TIMEOUT_MS: '5 min' }), /EMBEDDED_MONGO_START_TIMEOUT_MS must be an integer/);
      const saved = process.env.EMBEDDED_MONGO_START_TIMEOUT_MS;
      process.env.EMBEDDED_MONGO_START_TIMEOUT_MS = '-1';
      try {
        await t.rejects(startEmbeddedMongo({ dataDir: dir }), /EMBEDDED_MONGO_START_TIMEOUT_MS must be an integer/);
      } finally {
        if (saved === undefined) delete process.env.EMBEDDED_MONGO_START_TIMEOUT_MS;
        else process.env.EMBEDDED_MONGO_START_TIMEOUT_MS = saved;
      }
    });
  });
}
