/**
 * The on-disk store of `npm start` (scripts/embedded-mongo: BSON documents, query shortcuts) answers
 * exactly as the in-memory engine the other tests use, before and after a restart, and a store
 * written in the stock H2 backend's format is converted once and answers the same.
 */
import type { Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Binary, BSONRegExp, Code, Decimal128, Double, Int32, Long, MaxKey, MinKey, ObjectId, Timestamp, UUID, type Db, type Document } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { ensureIndexes } from '../../lib/service-indexes.ts';
import { loadDemoData, DEMO_TENANTS } from '../../scripts/demo/load.ts';
import { streamOpenInvoices, streamPaymentHistory, revenueByClient } from '../../lib/analytics/receivables-repo.ts';
import { streamTaxDocs } from '../../lib/tax/tax-repo.ts';
import { streamDeliveryRows, streamShrinkageRows, unitEconomicsGroups } from '../../lib/analytics/trip-audits-repo.ts';
import { conceptSumsByClientMonth } from '../../lib/analytics/billing-concepts-repo.ts';

export default async function storeTests(t: Test): Promise<void> {
  // Several engine starts and loads: allow for a loaded CI machine.
  t.setTimeout(600_000);

  const [A, B] = DEMO_TENANTS.map((d) => d.rfc) as [string, string];

  async function open(
    t: Test,
    opts: { dataDir?: string; launcherArgs?: string[] } = {},
  ): Promise<{ engine: EmbeddedMongo; db: Db; close: () => Promise<void> }> {
    const engine = await startEmbeddedMongo({ ...opts, shortLived: true });
    const { client, db } = await connectMongo(engine.uri, 'store', { serverSelectionTimeoutMS: 5000 });
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await client.close(true);
      await engine.stop();
    };
    t.teardown(close);
    return { engine, db, close };
  }

  const SORT = { date: -1, timestamp: -1, _id: -1 } as const;
  /** Unsorted answers come in each engine's natural order (insertion in memory, key order on disk): compared by _id. */
  const byId = <T>(docs: T[]): T[] => {
    const id = (d: T) => String((d as Document)._id);
    return docs.sort((x, y) => (id(x) < id(y) ? -1 : id(x) > id(y) ? 1 : 0));
  };

  const all = async <T>(rows: AsyncIterable<T>): Promise<T[]> => {
    const out: T[] = [];
    for await (const row of rows) out.push(row);
    return out;
  };
  /** Rows without an _id, in a fixed order. */
  const byJson = <T>(rows: T[]): T[] => rows.sort((x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1));

  /**
   * The reports' own queries and pipelines, and shapes around them: the on-disk engine decodes only
   * the fields a find's projection or a pipeline reads (scripts/embedded-mongo NeededFields), and
   * must answer as the in-memory engine, which decodes nothing.
   */
  async function reportReads(db: Db, from: number, to: number): Promise<Record<string, unknown>> {
    const docs = db.collection('financialDocs');
    const span = { start: from, end: to };
    return {
      openInvoices: byId(await all(streamOpenInvoices(db, A, { asOf: to }, 60_000))),
      paymentHistory: byJson(await all(streamPaymentHistory(db, A, { from, to }, 60_000))),
      revenue: byJson(await revenueByClient(db, A, span, 60_000)),
      taxInvoiceBasis: byId(await all(streamTaxDocs(db, A, { basis: 'invoice', ...span }, 60_000))),
      taxPaymentBasis: byId(await all(streamTaxDocs(db, B, { basis: 'payment', ...span }, 60_000))),
      deliveries: byId(await all(streamDeliveryRows(db, A, span, 60_000))),
      shrinkage: byId(await all(streamShrinkageRows(db, B, span, 60_000))),
      // $facet (the engine's FacetStage, patched to feed each facet batch by batch on its own thread).
      conceptSums: byJson(await conceptSumsByClientMonth(db, A, span, 60_000)),
      unitGroups: await unitEconomicsGroups(db, B, span, 60_000).then((g) => ({
        ...g,
        byClient: byJson(g.byClient),
        byVehicle: byJson(g.byVehicle),
        byRoute: byJson(g.byRoute),
      })),
      // Paths into arrays of documents, in a find's projection and in a pipeline.
      dottedProjection: byId(
        await docs.find({ company: A, 'payments.kind': 'payment' }, { projection: { 'payments.amount': 1, 'invoice.uuid': 1 } }).toArray(),
      ),
      positionalProjection: byId(await docs.find({ company: B, 'payments.kind': 'payment' }, { projection: { client: 1, 'payments.$': 1 } }).toArray()),
      arrayPaths: byId(
        await docs
          .aggregate([
            { $match: { company: A } },
            { $project: { amounts: '$payments.amount', uuid: '$invoice.uuid', first: { $arrayElemAt: ['$payments.date', 0] } } },
          ])
          .toArray(),
      ),
      unwound: await docs
        .aggregate([
          { $match: { company: A } },
          { $unwind: '$payments' },
          { $group: { _id: '$payments.kind', n: { $sum: 1 }, total: { $sum: '$payments.amount' } } },
          { $sort: { _id: 1 } },
        ])
        .toArray(),
      addedThenGrouped: await docs
        .aggregate([
          { $match: { company: B } },
          { $addFields: { paid: { $sum: '$payments.amount' } } },
          { $group: { _id: '$client', paid: { $sum: '$paid' }, n: { $sum: 1 } } },
          { $sort: { _id: 1 } },
        ])
        .toArray(),
      // Shapes whose output is the whole document: decoded whole.
      excluded: byId(await docs.aggregate([{ $match: { company: A } }, { $project: { invoice: 0 } }]).toArray()),
      root: byJson(await docs.aggregate([{ $match: { company: B } }, { $project: { _id: 0, whole: '$$ROOT' } }]).toArray()),
      unprojected: byId(await docs.aggregate([{ $match: { company: A, date: { $gte: from, $lte: to } } }, { $addFields: { x: 1 } }]).toArray()),
    };
  }

  /** Reads that take every path of the store: string prefilter, top-k, projection, _id look-ups, aggregations, $lookup. */
  async function answers(db: Db): Promise<Record<string, unknown>> {
    const docs = db.collection('financialDocs');
    const trips = db.collection('trips');
    const someClient = String((await docs.find({ company: A }).sort(SORT).limit(1).next())?.client);
    const someFolio = String((await docs.find({ company: B }).sort(SORT).skip(3).limit(1).next())?.invoice?.num);
    const dates = (await docs.find({ company: A }).sort({ date: 1, timestamp: 1, _id: 1 }).toArray()).map((d) => d.date as number);
    const from = dates[Math.floor(dates.length / 4)]!;
    const to = dates[Math.floor(dates.length / 2)]!;
    const idsA = (await docs.find({ company: A }).sort({ date: 1, timestamp: 1, _id: 1 }).skip(10).limit(6).toArray()).map((d) => String(d._id)).reverse();
    const otherTenantDoc = await docs.findOne({ company: B });
    const someId = String((await trips.find({ company: A }).sort({ createdAt: -1, _id: -1 }).skip(7).limit(1).next())?._id);
    return {
      page1: await docs.find({ company: A }).sort(SORT).limit(20).toArray(),
      page3: await docs.find({ company: A }).sort(SORT).skip(40).limit(20).toArray(),
      // Deep pages decode only the page (scripts/embedded-mongo: pageOnBytes); a page past the end is empty.
      lastPartialPage: await docs
        .find({ company: A })
        .sort(SORT)
        .skip((await docs.countDocuments({ company: A })) - 7)
        .limit(20)
        .toArray(),
      pastTheEnd: await docs.find({ company: A }).sort(SORT).skip(49_980).limit(20).toArray(),
      byClient: await docs
        .find({ company: A, client: someClient }, { projection: { client: 1, date: 1, 'invoice.num': 1 } })
        .sort(SORT)
        .limit(5)
        .toArray(),
      eqOperator: await docs
        .find({ company: { $eq: B } })
        .sort({ date: 1, timestamp: 1, _id: 1 })
        .limit(3)
        .toArray(),
      dotted: await docs.find({ company: B, 'invoice.num': someFolio }).toArray(),
      ranged: await docs
        .find({ company: A, date: { $gte: from, $lte: to } })
        .sort(SORT)
        .skip(2)
        .limit(10)
        .toArray(),
      rangedCount: await docs.countDocuments({ company: A, date: { $gte: from, $lt: to } }),
      // The data size the engine keeps (the on-disk engine counts it from the stored bytes).
      sizes: await Promise.all(['financialDocs', 'trips'].map(async (c) => (await db.command({ collStats: c })).size as number)),
      tripsPage: await trips.find({ company: B }).sort({ createdAt: -1, _id: -1 }).skip(5).limit(10).toArray(),
      tripsCount: await trips.countDocuments({ company: B, client: someClient }),
      byIds: await docs.find({ company: A, _id: { $in: [...idsA, 'NO-SUCH-ID', String(otherTenantDoc?._id)] } } as Document).toArray(),
      byIdsAggregate: await docs.aggregate([{ $match: { company: A, _id: { $in: idsA.slice(0, 3) } } }, { $project: { client: 1 } }]).toArray(),
      // Unsorted finds in small batches: the on-disk engine reads each batch at its getMore (StreamingCursor).
      streamedInBatches: byId(await docs.find({ company: A }, { batchSize: 7, projection: { client: 1, date: 1, 'invoice.num': 1 } }).toArray()),
      streamedRange: byId(await docs.find({ company: B, date: { $gte: from } }, { batchSize: 4 }).toArray()),
      nobody: await docs.find({ company: 'NOBODY000000' }).sort(SORT).limit(5).toArray(),
      byId: await trips.findOne({ company: A, _id: someId } as Document),
      counts: [
        await docs.countDocuments({ company: A }),
        await trips.countDocuments({ company: B }),
        await docs.countDocuments({ company: A, client: someClient }),
      ],
      grouped: await docs
        .aggregate([{ $match: { company: A, client: someClient } }, { $group: { _id: '$status', n: { $sum: 1 } } }, { $sort: { _id: 1 } }])
        .toArray(),
      joined: await trips
        .aggregate([
          { $match: { company: B } },
          { $sort: { createdAt: -1, _id: -1 } },
          { $limit: 5 },
          { $lookup: { from: 'financialDocs', localField: 'idFinan', foreignField: '_id', as: 'doc' } },
          { $project: { idFinan: 1, docs: { $size: '$doc' } } },
        ])
        .toArray(),
    };
  }

  /**
   * The demo documents every store gets, without the rollups' rebuild (recorded as not built, as a bulk
   * load before a service's start leaves them): the comparisons read documents and trips, never kept
   * totals, and the rebuild (thousands of small commands) was about nine tenths of each load's time.
   */
  const DEMO = { invoices: 150, trips: 150, rollups: 'worker' } as const;

  // With the service's indexes: the on-disk engine narrows queries with them (scripts/embedded-mongo
  // SecondaryIndex, QueryPlan); the in-memory engine ignores them and scans.
  const reference = await open(t);
  await ensureIndexes(reference.db);
  await loadDemoData(reference.db, DEMO);
  const expected = await answers(reference.db);
  // The report reads' period: a quarter to a half of tenant A's documents by date (the same demo data in every store).
  const reportDates = (await reference.db.collection('financialDocs').find({ company: A }).sort({ date: 1, timestamp: 1, _id: 1 }).toArray()).map(
    (d) => d.date as number,
  );
  const [from, to] = [reportDates[Math.floor(reportDates.length / 4)]!, reportDates[Math.floor(reportDates.length / 2)]!];
  const expectedReports = await reportReads(reference.db, from, to);

  t.test('on-disk store answers as the in-memory engine, before and after a restart', async (t) => {
    // The report reads compare something: each returns rows on the demo data.
    const empty = Object.entries(expectedReports as Record<string, unknown[]>)
      .filter(([, rows]) => rows.length === 0)
      .map(([name]) => name);
    t.same(empty, [], 'every report read returns rows');
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'embedded-store-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const first = await open(t, { dataDir });
    await ensureIndexes(first.db);
    await loadDemoData(first.db, DEMO);
    t.same(await answers(first.db), expected, 'fresh store');
    t.same(await reportReads(first.db, from, to), expectedReports, "the reports' reads, fresh store");

    // Writes go through encode/decode too.
    for (const db of [reference.db, first.db]) {
      await db.collection('financialDocs').updateMany({ company: A, status: 4 }, { $set: { note: 'revisada' }, $inc: { revision: 1 } });
      await db
        .collection('trips')
        .deleteMany({ company: B, client: String((await db.collection('trips').findOne({ company: B }, { sort: { _id: 1 } }))?.client) });
    }
    const afterWrites = await answers(reference.db);
    t.same(await answers(first.db), afterWrites, 'after updates and deletes');
    const sortTies = async (db: Db) => db.collection('financialDocs').find({ company: A }).sort({ status: 1 }).toArray();
    const full = await sortTies(first.db);
    t.same(
      await first.db.collection('financialDocs').find({ company: A }).sort({ status: 1 }).skip(3).limit(9).toArray(),
      full.slice(3, 12),
      'sort with limit (bounded heap) keeps the stable order of ties',
    );
    await first.close();

    const second = await open(t, { dataDir });
    t.same(await answers(second.db), afterWrites, 'after a restart');
    t.same(await reportReads(second.db, from, to), await reportReads(reference.db, from, to), "the reports' reads, after writes and a restart");
  });

  t.test('a store in the stock H2 format is converted once and answers the same', async (t) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'embedded-store-stock-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const stock = await open(t, { dataDir, launcherArgs: ['--stock-store'] });
    await ensureIndexes(stock.db);
    await loadDemoData(stock.db, DEMO);
    const before = await answers(stock.db);
    await stock.close();

    const converted = await open(t, { dataDir });
    t.same(await answers(converted.db), before, 'converted store');
    await converted.close();
    const reopened = await open(t, { dataDir });
    t.same(await answers(reopened.db), before, 'reopened after the conversion');
  });

  t.test('unsorted finds and aggregations are read batch by batch: writes between batches are seen, a closed cursor is freed', async (t) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'embedded-store-cursor-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const { db } = await open(t, { dataDir });
    const c = db.collection('rows');
    await c.createIndex({ n: 1 });
    await c.insertMany(Array.from({ length: 3000 }, (_, i) => ({ _id: `k${String(i).padStart(4, '0')}`, n: i, pad: 'x'.repeat(300) })) as Document[]);

    // On the index's plan each batch reads the documents as they are then.
    const cursor = c.find({ n: { $gte: 0 } }, { batchSize: 100, projection: { n: 1 } });
    const seen: Document[] = [];
    for (let i = 0; i < 100; i++) seen.push((await cursor.next())!);
    await c.deleteMany({ n: { $gte: 2000 } });
    await c.updateOne({ _id: 'k1500' } as Document, { $set: { n: 1_000_000 } });
    for await (const doc of cursor) seen.push(doc);
    t.equal(seen.length, 2000, 'the documents deleted after the first batch are not read');
    t.equal(new Set(seen.map((d) => d._id)).size, 2000, 'each document once');
    t.same(
      seen.find((d) => d._id === 'k1500'),
      { _id: 'k1500', n: 1_000_000 },
      'a document changed after the first batch is read as it is then, projected',
    );

    // An aggregation read in batches is computed batch by batch too (no $group or $sort to wait for).
    const rows = c.aggregate<Document>([{ $match: { n: { $gte: 0, $lt: 2000 } } }, { $project: { n: 1, odd: { $mod: ['$n', 2] } } }], { batchSize: 50 });
    const read: Document[] = [];
    for (let i = 0; i < 50; i++) read.push((await rows.next())!);
    await c.deleteMany({ n: { $gte: 1000, $lt: 2000 } });
    for await (const row of rows) read.push(row);
    t.equal(read.length, 1000, 'an aggregation does not return the documents deleted after its first batch');
    t.same(read[7], { _id: 'k0007', n: 7, odd: 1 }, 'its stages ran on each batch');
    await t.rejects(
      c.aggregate([{ $match: { n: { $gte: 0 } } }, { $project: { n: { $divide: ['$n', 'text'] } } }], { batchSize: 5 }).toArray(),
      /divide|numeric|only supports/i,
      'a failing stage fails the aggregation',
    );

    // A cursor closed after its first batch: the engine drops it and goes on answering.
    const early = c.find({}, { batchSize: 10 });
    t.ok(await early.next(), 'a first document');
    await early.close();
    t.equal((await c.find({}, { batchSize: 500 }).toArray()).length, 1001, 'a whole scan in batches of 500');
    await t.rejects(
      c.find({ n: { $gte: 0 } }, { batchSize: 5, projection: { n: 1, pad: 0 } }).toArray(),
      /projection|exclusion|inclusion/i,
      'a malformed projection fails the find',
    );
  });

  t.test('every BSON type the engine stores reads back as the in-memory engine gives it, whole and in part', async (t) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'embedded-store-types-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const disk = await open(t, { dataDir });
    const doc = {
      _id: 'types',
      double: new Double(-2.5),
      wholeDouble: new Double(3),
      string: 'ascii',
      utf8: 'Ñandú — 運送 🚚',
      empty: '',
      nested: { a: { b: [1, { c: 'd' }, [2, 3]] }, n: null },
      array: [new Int32(1), 'two', { three: 3 }, [4], null, true],
      emptyArray: [],
      emptyDoc: {},
      binary: new Binary(Buffer.from([0, 1, 2, 255])),
      userBinary: new Binary(Buffer.from('xyz'), Binary.SUBTYPE_USER_DEFINED),
      uuid: new UUID('0f8fad5b-d9cb-469f-a165-70867728950e'),
      oldUuid: new Binary(Buffer.from('0123456789abcdef'), Binary.SUBTYPE_UUID_OLD),
      objectId: new ObjectId('64b7f0c2a1b2c3d4e5f60718'),
      yes: true,
      no: false,
      date: new Date('2026-11-28T03:00:00.123Z'),
      nothing: null,
      regex: new BSONRegExp('^a.c$', 'i'),
      code: new Code('function () { return 1; }'),
      int32: new Int32(-7),
      int64: Long.fromString('9007199254740993'),
      timestamp: new Timestamp({ t: 1_700_000_000, i: 5 }),
      decimal: Decimal128.fromString('1234.5678'),
      minKey: new MinKey(),
      maxKey: new MaxKey(),
      // Field names are reused once decoded (StoredBsonDecoder): names alike, non-ASCII and too long to keep.
      names: Object.fromEntries(['año', 'ano', 'añ', 'a', 'ab', 'ba', 'x'.repeat(48), 'x'.repeat(49), 'é'.repeat(30)].map((n, i) => [n, i])),
    };
    const opts = { promoteValues: false, promoteLongs: false } as const;
    const read = async (db: Db) => ({
      whole: await db.collection('types').findOne({ _id: 'types' } as Document, opts),
      projected: await db
        .collection('types')
        .find({ _id: 'types' } as Document, { ...opts, projection: { utf8: 1, 'nested.a.b': 1, 'array.three': 1, uuid: 1 } })
        .toArray(),
      piped: await db
        .collection('types')
        .aggregate([{ $match: { yes: true } }, { $project: { b: '$nested.a.b', d: '$decimal', t: '$timestamp', r: '$regex' } }], opts)
        .toArray(),
    });
    for (const db of [reference.db, disk.db]) await db.collection('types').insertOne(doc as Document);
    const expected = await read(reference.db);
    t.same(await read(disk.db), expected, 'fresh');
    await disk.close();
    const reopened = await open(t, { dataDir });
    t.same(await read(reopened.db), expected, 'after a restart');
    t.equal(String((expected.whole as Document).utf8), doc.utf8, 'the reference is the document written');
  });
}
