/**
 * The on-disk engine's secondary indexes (scripts/embedded-mongo: SecondaryIndex, QueryPlan) only
 * narrow what a query reads: every find, sorted page, count and aggregation answers exactly as the
 * in-memory engine, which has no such indexes and scans. The documents are made to hit the index's
 * edges: arrays (multikey), missing and null fields, numbers of mixed Java types, -0.0, strings
 * outside the BMP, sub-documents and nested arrays where a scalar is indexed, ObjectId ids; and so
 * are the queries: $in, exclusive and inclusive ranges, $elemMatch, $or (keyset cursors; branches read as a union of their index ranges), $and,
 * both sort directions, skips. Then after updates and deletes, and after a restart (indexes rebuilt
 * from the store).
 */
import type { Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ObjectId, type Db, type Document, type IndexDescription } from 'mongodb';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';

export default async function indexesTests(t: Test): Promise<void> {
  t.setTimeout(300_000);

  async function open(t: Test, dataDir?: string): Promise<{ db: Db; close: () => Promise<void> }> {
    const engine = await startEmbeddedMongo({ ...(dataDir ? { dataDir } : {}), shortLived: true });
    const { client, db } = await connectMongo(engine.uri, 'idx', { serverSelectionTimeoutMS: 5000 });
    let closed = false;
    const close = async () => {
      if (closed) return;
      closed = true;
      await client.close(true);
      await engine.stop();
    };
    t.teardown(close);
    return { db, close };
  }

  const INDEXES: IndexDescription[] = [
    { key: { company: 1, date: -1, ts: -1, _id: -1 }, name: 'tenant_date' },
    { key: { company: 1, updated: 1, _id: 1 }, name: 'tenant_updated' },
    { key: { company: 1, client: 1, date: -1, ts: -1, _id: -1 }, name: 'tenant_client_date' },
    { key: { company: 1, 'legs.status': 1, created: -1, _id: -1 }, name: 'tenant_leg_status' },
    { key: { company: 1, 'legs.unload': 1 }, name: 'tenant_leg_unload' },
    // Holds the sort's fields after the range: the engine ranks a range's candidates from its entries.
    { key: { company: 1, 'legs.unload': 1, created: -1, _id: -1 }, name: 'tenant_leg_unload_created' },
    { key: { company: 1, client: 1, 'legs.unload': 1 }, name: 'tenant_client_leg_unload' },
    { key: { company: 1, amount: 1 }, name: 'tenant_amount' },
    { key: { company: 1, tags: 1 }, name: 'tenant_tags' },
    // A multikey field's equality, then the sort: one point walks its entries in the sort's order, each document once.
    { key: { company: 1, tags: 1, created: -1, _id: -1 }, name: 'tenant_tags_created' },
    // Ends without _id: a descending sort walks it backward, equal keys in natural order.
    { key: { company: 1, date: 1, ts: 1 }, name: 'tenant_date_ts' },
  ];

  /** A deterministic generator (no Math.random: both engines get the same documents). */
  function lcg(seed: number): () => number {
    let x = seed >>> 0;
    return () => {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      return x / 2 ** 32;
    };
  }

  const TENANTS = ['AAA010101AAA', 'BBB020202BBB'];
  const CLIENTS = ['ACME', 'acme', 'Zeta', 'Ωmega', '𝒳-client', 'a\u0000b', ''];

  function documents(n: number): Document[] {
    const r = lcg(20261124);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const docs: Document[] = [];
    for (let i = 0; i < n; i += 1) {
      const legs = Array.from({ length: Math.floor(r() * 4) }, () => {
        const leg: Document = { status: pick([1, 2, 3, 2.0, 4]) };
        if (r() < 0.85) leg.unload = 1_700_000_000_000 + Math.floor(r() * 1000) * 86_400_000;
        return leg;
      });
      const doc: Document = {
        _id: i % 17 === 0 ? new ObjectId(i.toString(16).padStart(24, '0')) : `doc-${String(i).padStart(5, '0')}`,
        company: pick(TENANTS),
        date: 1_700_000_000_000 + Math.floor(r() * 400) * 86_400_000,
        ts: Math.floor(r() * 5),
        updated: new Date(1_700_000_000_000 + Math.floor(r() * 1_000_000) * 1000).toISOString(),
        created: Math.floor(r() * 300),
        legs,
      };
      if (r() < 0.9) doc.client = pick(CLIENTS);
      else if (r() < 0.5) doc.client = null;
      // Amounts of every numeric flavour, and a few values an index cannot hold as a number.
      const a = Math.floor(r() * 50) - 10;
      doc.amount = pick([a, a + 0.5, -0, a * 1.0, { cents: a }, [a, a + 1], [[a]], `${a}`]);
      if (r() < 0.7) doc.tags = Array.from({ length: Math.floor(r() * 3) }, () => pick(['urgent', 'late', 'ok']));
      docs.push(doc);
    }
    return docs;
  }

  const SORT = { date: -1, ts: -1, _id: -1 } as const;
  const [A, B] = TENANTS as [string, string];
  const DAY = 86_400_000;
  const T0 = 1_700_000_000_000;

  /**
   * Without a sort, each engine returns its natural order: insertion order in memory, key order on
   * disk (as before these indexes). Such answers are compared as sets.
   */
  const unordered = async (docs: Promise<Document[]>): Promise<Document[]> =>
    (await docs).sort((x, y) => (String(x._id) < String(y._id) ? -1 : String(x._id) > String(y._id) ? 1 : 0));

  async function answers(db: Db): Promise<Record<string, unknown>> {
    const c = db.collection('docs');
    const cursorAt = (await c.find({ company: A }).sort(SORT).skip(37).limit(1).next())!;
    const after = {
      $or: [
        { date: { $lt: cursorAt.date } },
        { date: cursorAt.date, ts: { $lt: cursorAt.ts } },
        { date: cursorAt.date, ts: cursorAt.ts, _id: { $lt: cursorAt._id } },
      ],
    };
    const updatedAt = String((await c.find({ company: B }).sort({ updated: 1, _id: 1 }).skip(50).limit(1).next())!.updated);
    const q: Record<string, () => Promise<unknown>> = {
      page1: () => c.find({ company: A }).sort(SORT).limit(20).toArray(),
      page4: () => c.find({ company: A }).sort(SORT).skip(60).limit(20).toArray(),
      pageAsc: () => c.find({ company: B }).sort({ date: 1, ts: 1, _id: 1 }).skip(5).limit(15).toArray(),
      // Ties on date come in natural order, which differs between the engines for mixed id types.
      pagePartialSort: () =>
        c
          .find({ company: A, _id: { $type: 'string' } })
          .sort({ date: -1 })
          .limit(25)
          .toArray(),
      cursorPage: () =>
        c
          .find({ company: A, ...after })
          .sort(SORT)
          .limit(20)
          .toArray(),
      cursorPageAnd: () =>
        c
          .find({ $and: [{ company: A, client: 'ACME' }, after] })
          .sort(SORT)
          .limit(10)
          .toArray(),
      byClient: () => c.find({ company: A, client: 'Ωmega' }).sort(SORT).limit(10).toArray(),
      byClientOutsideBmp: () => c.find({ company: B, client: '𝒳-client' }).sort(SORT).toArray(),
      byClientNul: () => unordered(c.find({ company: B, client: 'a\u0000b' }).toArray()),
      byClientEmpty: () => c.find({ company: A, client: '' }).sort(SORT).toArray(),
      byClientNull: () => c.find({ company: A, client: null }).sort(SORT).toArray(),
      clientIn: () =>
        c
          .find({ company: A, client: { $in: ['ACME', 'acme', 'Zeta'] } })
          .sort(SORT)
          .skip(3)
          .limit(30)
          .toArray(),
      clientRange: () =>
        c
          .find({ company: B, client: { $gt: 'Z', $lte: 'Ωmega' } })
          .sort(SORT)
          .toArray(),
      dateRange: () =>
        c
          .find({ company: A, date: { $gte: T0 + 100 * DAY, $lt: T0 + 200 * DAY } })
          .sort(SORT)
          .skip(4)
          .limit(12)
          .toArray(),
      dateRangeExclusive: () => unordered(c.find({ company: A, date: { $gt: T0 + 100 * DAY, $lte: T0 + 101 * DAY } }).toArray()),
      dateEmptyRange: () => unordered(c.find({ company: A, date: { $gte: T0 + 300 * DAY, $lte: T0 + 200 * DAY } }).toArray()),
      dateMixedTypes: () => unordered(c.find({ company: A, date: { $gte: T0, $lte: 'z' } }).toArray()),
      sync: () =>
        c
          .find({ company: B, updated: { $gte: updatedAt } })
          .sort({ updated: 1, _id: 1 })
          .limit(30)
          .toArray(),
      syncDesc: () =>
        c
          .find({ company: B, updated: { $gte: updatedAt } })
          .sort({ updated: -1, _id: -1 })
          .limit(30)
          .toArray(),
      legStatus: () =>
        c
          .find({ company: A, legs: { $elemMatch: { status: 2 } } })
          .sort({ created: -1, _id: -1 })
          .limit(25)
          .toArray(),
      legStatusDotted: () => c.find({ company: A, 'legs.status': 2 }).sort({ created: -1, _id: -1 }).skip(10).limit(25).toArray(),
      legStatusAsc: () => c.find({ company: B, 'legs.status': 3 }).sort({ created: 1, _id: 1 }).limit(25).toArray(),
      // Ties on (date, ts) in natural order: string ids only, inserted in their key order, so both engines agree.
      tiesBackward: () =>
        c
          .find({ company: A, _id: { $type: 'string' } })
          .sort({ date: -1, ts: -1 })
          .skip(3)
          .limit(60)
          .toArray(),
      legUnload: () =>
        unordered(
          c
            .find({
              company: A,
              'legs.unload': { $gte: T0 + 200 * DAY, $lte: T0 + 260 * DAY },
              legs: { $elemMatch: { unload: { $gte: T0 + 200 * DAY, $lte: T0 + 260 * DAY } } },
            })
            .toArray(),
        ),
      legUnloadClient: () =>
        unordered(c.find({ company: B, client: 'Zeta', legs: { $elemMatch: { unload: { $gte: T0 + 100 * DAY }, status: { $in: [2, 3] } } } }).toArray()),
      // The client's index gives the order, the client-and-unload index narrows more: a sorted page tries the ordered walk first.
      clientLegUnloadPage: () =>
        c
          .find({ company: A, client: 'ACME', legs: { $elemMatch: { unload: { $gte: T0 + 100 * DAY, $lte: T0 + 900 * DAY } } } })
          .sort(SORT)
          .limit(10)
          .toArray(),
      clientLegUnloadNarrow: () =>
        c
          .find({ company: B, client: 'Zeta', legs: { $elemMatch: { unload: { $gte: T0 + 300 * DAY, $lte: T0 + 310 * DAY } } } })
          .sort(SORT)
          .skip(1)
          .limit(5)
          .toArray(),
      // A range on a leg field sorted by fields the range cannot order: ranked from the index entries, then a page read.
      legUnloadRanked: () =>
        c
          .find({ company: A, legs: { $elemMatch: { unload: { $gte: T0 + 200 * DAY, $lte: T0 + 460 * DAY } } } })
          .sort({ created: -1, _id: -1 })
          .limit(20)
          .toArray(),
      legUnloadRankedSkip: () =>
        c
          .find({ company: A, legs: { $elemMatch: { unload: { $gte: T0 + 200 * DAY, $lte: T0 + 460 * DAY } } } })
          .sort({ created: -1, _id: -1 })
          .skip(15)
          .limit(10)
          .toArray(),
      legUnloadRankedAsc: () =>
        c
          .find({ company: B, legs: { $elemMatch: { unload: { $gt: T0 + 100 * DAY } } } })
          .sort({ created: 1, _id: 1 })
          .skip(3)
          .limit(20)
          .toArray(),
      legUnloadRankedCursor: () =>
        c
          // Ids are strings and ObjectIds here: the filter is a plain Document.
          .find({
            company: A,
            legs: { $elemMatch: { unload: { $gte: T0 + 200 * DAY, $lte: T0 + 460 * DAY } } },
            $or: [{ created: { $lt: 150 } }, { created: 150, _id: { $lt: 'doc-05000' } }],
          } as Document)
          .sort({ created: -1, _id: -1 })
          .limit(20)
          .toArray(),
      legUnloadRankedNotExact: () =>
        c
          .find({ company: B, legs: { $elemMatch: { unload: { $gte: T0 + 50 * DAY }, status: 2 } } })
          .sort({ created: -1, _id: -1 })
          .skip(5)
          .limit(15)
          .toArray(),
      amountEq: () => unordered(c.find({ company: A, amount: 0 }).toArray()),
      amountEqDouble: () => unordered(c.find({ company: A, amount: 5.0 }).toArray()),
      amountRange: () => unordered(c.find({ company: B, amount: { $gte: -3, $lt: 7.5 } }).toArray()),
      amountString: () => unordered(c.find({ company: B, amount: { $gte: '1', $lt: '5' } }).toArray()),
      tags: () => unordered(c.find({ company: A, tags: 'late' }).toArray()),
      tagsIn: () =>
        c
          .find({ company: B, tags: { $in: ['urgent', 'nope'] } })
          .sort({ _id: 1 })
          .toArray(),
      tagsPage: () => c.find({ company: A, tags: 'ok' }).sort({ created: -1, _id: -1 }).skip(7).limit(15).toArray(),
      tagsPageIn: () =>
        c
          .find({ company: B, tags: { $in: ['ok', 'late'] } })
          .sort({ created: -1, _id: -1 })
          .limit(15)
          .toArray(),
      orClients: () =>
        c
          .find({ company: A, $or: [{ client: 'ACME' }, { client: 'Zeta' }] })
          .sort(SORT)
          .toArray(),
      orMixed: () =>
        unordered(
          c
            .find({
              $or: [
                { company: A, client: 'ACME' },
                { company: B, date: { $lt: T0 + 50 * DAY } },
              ],
            })
            .toArray(),
        ),
      // Each branch narrower than what the branches share (the tenant): read as a union of the branches' index ranges.
      orUnion: () =>
        unordered(
          c
            .find({
              company: A,
              $or: [
                { client: 'Zeta', date: { $gte: T0 + 50 * DAY, $lte: T0 + 150 * DAY } },
                { legs: { $elemMatch: { unload: { $gte: T0 + 300 * DAY, $lte: T0 + 320 * DAY } } } },
              ],
            })
            .toArray(),
        ),
      orUnionMixedTypes: () =>
        unordered(c.find({ company: B, $or: [{ tags: 'urgent', date: { $lt: T0 + 200 * DAY } }, { amount: { $gte: 10, $lt: 20 } }] }).toArray()),
      orUnionOverlap: () =>
        unordered(
          c
            .find({
              company: A,
              $or: [{ date: { $gte: T0 + 100 * DAY, $lte: T0 + 140 * DAY } }, { client: 'acme', date: { $gte: T0 + 120 * DAY } }, { tags: 'ok' }],
            })
            .toArray(),
        ),
      orUnionPage: () =>
        c
          .find({ company: A, $or: [{ client: 'Zeta', date: { $gte: T0 + 50 * DAY } }, { tags: 'late' }] })
          .sort(SORT)
          .skip(2)
          .limit(10)
          .toArray(),
      // One branch no index narrows beyond the tenant: the tenant's documents are read.
      orOneBranchUnindexed: () => unordered(c.find({ company: A, $or: [{ client: 'ACME' }, { ts: 3 }] }).toArray()),
      orUnionAggregate: () =>
        c
          .aggregate([
            { $match: { company: B, $or: [{ client: 'Zeta', date: { $lte: T0 + 300 * DAY } }, { 'legs.unload': { $gte: T0 + 400 * DAY } }] } },
            { $group: { _id: '$client', n: { $sum: 1 } } },
            { $sort: { _id: 1 } },
          ])
          .toArray(),
      nobody: () => c.find({ company: 'NOBODY' }).sort(SORT).limit(5).toArray(),
      counts: async () => [
        await c.countDocuments({ company: A }),
        await c.countDocuments({ company: A, client: 'ACME' }),
        await c.countDocuments({ company: B, client: { $in: ['Zeta', 'Ωmega'] } }),
        await c.countDocuments({ company: A, date: { $gte: T0 + 100 * DAY, $lt: T0 + 200 * DAY } }),
        await c.countDocuments({ company: A, date: { $gt: T0 + 100 * DAY } }),
        await c.countDocuments({ company: B, 'legs.status': 2 }),
        await c.countDocuments({ company: A, amount: { $gte: 0 } }),
        await c.countDocuments({ company: A, tags: 'ok' }),
        // A point of a multikey field: one entry per document holding it (['ok', 'ok'] included); several points: distinct.
        await c.countDocuments({ company: B, tags: 'late' }),
        await c.countDocuments({ company: A, tags: { $in: ['ok', 'late'] } }),
        await c.countDocuments({ company: B, tags: { $in: ['urgent', 'ok', 'late'] } }),
        await c.countDocuments({ company: A, tags: { $in: ['late'] }, _id: { $type: 'string' } }),
        await c.countDocuments({ company: B, updated: { $gte: updatedAt } }),
        // $ne counts as (all) − (equal) when both are exact on an index: null and missing clients included.
        await c.countDocuments({ company: A, client: { $ne: 'ACME' } }),
        await c.countDocuments({ company: B, client: { $ne: '' } }),
        await c.countDocuments({ company: A, client: { $ne: 'nobody' } }),
        await c.countDocuments({ company: A, tags: { $ne: 'late' } }),
        await c.countDocuments({ company: A, amount: { $ne: 0 } }),
        await c.countDocuments({ company: A, client: { $in: ['ACME', 'acme'] }, date: { $gte: T0 + 100 * DAY } }),
        // $elemMatch on one field of the legs: counted from the multikey index, each document once, while every
        // document holds legs as an array with one scalar unload each; after writes() adds one that does not, read.
        await c.countDocuments({ company: A, legs: { $elemMatch: { unload: { $gte: T0 + 200 * DAY, $lte: T0 + 600 * DAY } } } }),
        await c.countDocuments({ company: B, legs: { $elemMatch: { unload: { $gte: T0 + 200 * DAY, $lte: T0 + 600 * DAY } } } }),
        await c.countDocuments({ company: B, client: 'Zeta', legs: { $elemMatch: { unload: { $gte: T0 + 100 * DAY } } } }),
        await c.countDocuments({ company: A, legs: { $elemMatch: { status: 2 } } }),
        await c.countDocuments({ company: A, client: { $ne: 'ACME' }, legs: { $elemMatch: { unload: { $gt: T0 + 500 * DAY } } } }),
        await c.countDocuments({ company: A, legs: { $elemMatch: { unload: { $gte: T0 + 200 * DAY }, status: 2 } } }),
      ],
      aggregate: () =>
        c
          .aggregate([
            { $match: { company: A, date: { $gte: T0 + 30 * DAY, $lte: T0 + 330 * DAY } } },
            { $group: { _id: '$client', n: { $sum: 1 }, ts: { $sum: '$ts' } } },
            { $sort: { _id: 1 } },
          ])
          .toArray(),
      aggregateElem: () =>
        unordered(
          c
            .aggregate([
              {
                $match: {
                  company: B,
                  'legs.unload': { $gte: T0 + 100 * DAY, $lte: T0 + 500 * DAY },
                  legs: { $elemMatch: { unload: { $gte: T0 + 100 * DAY, $lte: T0 + 500 * DAY } } },
                },
              },
              { $project: { _id: 1, client: 1 } },
            ])
            .toArray(),
        ),
      validate: async () => (await db.command({ count: 'docs', query: { company: A, client: 'acme' } })).n,
    };
    const out: Record<string, unknown> = {};
    for (const [name, run] of Object.entries(q)) out[name] = await run();
    return out;
  }

  async function writes(db: Db): Promise<void> {
    const c = db.collection('docs');
    await c.updateMany({ company: A, client: 'ACME' }, { $set: { client: 'Zeta' }, $inc: { ts: 1 } });
    await c.updateMany({ company: B, 'legs.status': 3 }, { $push: { legs: { status: 4, unload: T0 + 123 * DAY } } } as Document);
    await c.updateOne({ company: A, amount: { $type: 'object' } }, { $set: { amount: 12 } });
    await c.deleteMany({ company: B, client: 'Ωmega' });
    await c.deleteMany({ company: A, date: { $lt: T0 + 20 * DAY } });
    await c.insertMany(documents(40).map((d, i) => ({ ...d, _id: `new-${i}`, date: T0 + 150 * DAY })) as Document[]);
    await c.findOneAndUpdate({ company: A }, { $set: { date: T0 + 999 * DAY } }, { sort: SORT });
    // Legs the index cannot read element by element: a sub-document instead of an array (no $elemMatch matches it),
    // and an array of unload dates in one leg (matches a two-sided $elemMatch range with no single date inside it).
    await c.insertMany([
      {
        _id: 'legs-object',
        company: A,
        client: 'Zeta',
        date: T0,
        ts: 0,
        legs: { unload: T0 + 300 * DAY, status: 2 },
        updated: '2026-01-02T00:00:00.000Z',
        created: 7,
      },
      {
        _id: 'unload-array',
        company: B,
        client: 'Zeta',
        date: T0,
        ts: 0,
        legs: [{ unload: [T0 + 150 * DAY, T0 + 700 * DAY], status: 3 }],
        updated: '2026-01-03T00:00:00.000Z',
        created: 8,
      },
    ] as Document[]);
    // Tags the index cannot hold (a nested array: read), and one as a scalar (one entry).
    await c.insertMany([
      { _id: 'tags-nested', company: A, client: 'Zeta', date: T0, ts: 0, legs: [], tags: [['ok'], 'late'], updated: '2026-01-04T00:00:00.000Z', created: 9 },
      { _id: 'tags-scalar', company: A, client: 'Zeta', date: T0, ts: 0, legs: [], tags: 'ok', updated: '2026-01-05T00:00:00.000Z', created: 10 },
    ] as Document[]);
    await c.replaceOne(
      { _id: 'doc-00002' } as Document,
      { company: B, date: T0, ts: 0, legs: [], updated: '2026-01-01T00:00:00.000Z', created: 1 },
      { upsert: true },
    );
  }

  const DOCS = documents(3000);
  const reference = await open(t);
  await reference.db.collection('docs').createIndexes(INDEXES);
  await reference.db.collection('docs').insertMany(DOCS.map((d) => ({ ...d })));
  const expected = await answers(reference.db);
  await writes(reference.db);
  const expectedAfterWrites = await answers(reference.db);

  t.test('indexed on-disk store answers as the scanning in-memory engine', async (t) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'embedded-indexes-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));

    // Indexes first, then documents: maintained by the write hooks.
    const first = await open(t, dataDir);
    await first.db.collection('docs').createIndexes(INDEXES);
    await first.db.collection('docs').insertMany(DOCS.map((d) => ({ ...d })));
    t.same(await answers(first.db), expected, 'indexes kept by inserts');
    await writes(first.db);
    t.same(await answers(first.db), expectedAfterWrites, 'after updates, deletes, upserts');
    await first.close();

    // Rebuilt from the store at open.
    const second = await open(t, dataDir);
    t.same(await answers(second.db), expectedAfterWrites, 'after a restart');

    // An index created on a collection that already holds documents is built before createIndexes answers.
    await second.db.collection('docs').dropIndexes();
    t.same(await answers(second.db), expectedAfterWrites, 'without indexes (scans)');
    await second.db.collection('docs').createIndexes(INDEXES);
    t.same(await answers(second.db), expectedAfterWrites, 'indexes created on existing documents');
    const stats = await second.db.command({ validate: 'docs' });
    const keys = stats.keysPerIndex as Record<string, number>;
    const n = await second.db.collection('docs').countDocuments({});
    t.equal(keys.tenant_date, n, 'one entry per document in a single-valued index');
    t.ok(keys.tenant_leg_status! > n * 0.9, 'multikey index holds an entry per distinct leg status');
  });

  t.test('aggregation rows come in batches of cursor.batchSize on both backends, and $lookup by _id finds the same documents', async (t) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'embedded-batches-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    for (const [backend, dir] of [
      ['on disk', dataDir],
      ['in memory', undefined],
    ] as const) {
      const engine = await startEmbeddedMongo({ ...(dir ? { dataDir: dir } : {}), shortLived: true });
      const { client, db } = await connectMongo(engine.uri, 'batches', { serverSelectionTimeoutMS: 5000, driver: { monitorCommands: true } });
      t.teardown(async () => {
        await client.close(true);
        await engine.stop();
      });
      const rows = Array.from({ length: 603 }, (_, i) => ({ _id: `r${String(i).padStart(4, '0')}`, n: i, ref: i % 7 === 0 ? null : `t${i % 50}` }));
      await db.collection<{ _id: string }>('rows').insertMany(rows);
      await db.collection<{ _id: string; v: number }>('targets').insertMany(Array.from({ length: 40 }, (_, i) => ({ _id: `t${i}`, v: i })));
      const batches: number[] = [];
      client.on('commandSucceeded', (e) => {
        const cursor = (e.reply as { cursor?: { firstBatch?: unknown[]; nextBatch?: unknown[] } }).cursor;
        const batch = cursor?.firstBatch ?? cursor?.nextBatch;
        if (batch) batches.push(batch.length);
      });
      const pipeline = [
        { $match: { n: { $gte: 2 } } },
        { $sort: { _id: 1 } },
        { $lookup: { from: 'targets', localField: 'ref', foreignField: '_id', as: 't' } },
        { $project: { n: 1, v: '$t.v' } },
      ];
      const got = await db.collection('rows').aggregate(pipeline, { batchSize: 250 }).toArray();
      t.same(batches, [250, 250, 101], `${backend}: first batch then getMore batches`);
      const expected = rows
        .filter((r) => r.n >= 2)
        .map((r) => ({ _id: r._id, n: r.n, v: r.ref !== null && Number(r.ref.slice(1)) < 40 ? [Number(r.ref.slice(1))] : [] }));
      t.same(got, expected, `${backend}: every row once, in order, with its looked-up document`);
      batches.length = 0;
      t.equal((await db.collection('rows').aggregate(pipeline).toArray()).length, 601, `${backend}: without batchSize, as before`);
    }
  });
}
