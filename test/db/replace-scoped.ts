/**
 * lib/db/replace-scoped.ts: a scope of kept entries made to hold exactly a computed set. What it
 * writes is seen on the collection it is handed (its bulkWrite and deleteMany recorded, then
 * passed on to the engine): an unchanged entry is not written again, a changed one always is.
 */
import type { Test } from 'tap';
import { BSON, type AnyBulkWriteOperation, type Collection } from 'mongodb';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { rawId, replaceScoped } from '../../lib/db/replace-scoped.ts';

interface Entry {
  _id: string;
  tenant: string;
  day: string;
  n: number;
  share?: number;
  nested?: { list: number[]; label: string | null };
  gap?: undefined;
}

export default async function replaceScopedTests(t: Test): Promise<void> {
  const engine = await startEmbeddedMongo({ shortLived: true });
  t.teardown(() => engine.stop());
  const { client, db } = await connectMongo(engine.uri, 'replacescoped');
  t.teardown(() => client.close());
  const coll = db.collection<Entry>('entries');

  // What replaceScoped asks of the collection, per call: the ids it replaces and the ids it deletes.
  let replaced: string[] = [];
  let deleted: string[] = [];
  const recorded = Object.create(coll) as Collection<Entry>;
  recorded.bulkWrite = (ops: readonly AnyBulkWriteOperation<Entry>[], opts?: Parameters<Collection<Entry>['bulkWrite']>[1]) => {
    for (const op of ops) if ('replaceOne' in op) replaced.push(String((op.replaceOne.filter as { _id: string })._id));
    return coll.bulkWrite(ops, opts);
  };
  recorded.deleteMany = (filter: { _id: { $in: string[] } }, opts?: object) => {
    deleted.push(...filter._id.$in);
    return coll.deleteMany(filter, opts);
  };
  const keep = async (tenant: string, day: string, docs: Entry[]): Promise<void> => {
    replaced = [];
    deleted = [];
    await replaceScoped(recorded, tenant, { tenant, day }, docs, 60_000);
  };
  const scope = async (tenant: string, day: string): Promise<Entry[]> => coll.find({ tenant, day }).sort({ _id: 1 }).toArray();

  const a: Entry = { _id: 'T|d1|a', tenant: 'T', day: 'd1', n: 2, share: 0.25, nested: { list: [1, 2.5, -3], label: null } };
  const b: Entry = { tenant: 'T', _id: 'T|d1|b', day: 'd1', n: 1_000_000_000_000 };
  const c: Entry = { _id: 'T|d1|c', tenant: 'T', day: 'd1', n: 0, gap: undefined, nested: { list: [], label: 'x' } };
  const other: Entry = { _id: 'U|d1|a', tenant: 'U', day: 'd1', n: 7 };
  const elsewhere: Entry = { _id: 'T|d2|a', tenant: 'T', day: 'd2', n: 9 };
  await coll.insertMany([other, elsewhere]);

  await t.test('a first keep writes every entry', async (t) => {
    await keep('T', 'd1', [a, b, c]);
    t.same(replaced.sort(), ['T|d1|a', 'T|d1|b', 'T|d1|c']);
    t.same(deleted, []);
    // `gap: undefined` is kept as null (the driver's default), as any write of it would be.
    t.same(await scope('T', 'd1'), [a, b, { ...c, gap: null }]);
  });

  await t.test('the same entries again: nothing written, nothing deleted', async (t) => {
    await keep('T', 'd1', [a, b, c]);
    t.same(replaced, []);
    t.same(deleted, []);
    // In another order too.
    await keep('T', 'd1', [c, a, b]);
    t.same(replaced, []);
  });

  await t.test('one changed deep inside, one gone, one new', async (t) => {
    const a2: Entry = { ...a, nested: { list: [1, 2.5, -4], label: null } };
    const d: Entry = { _id: 'T|d1|d', tenant: 'T', day: 'd1', n: 4 };
    await keep('T', 'd1', [a2, c, d]);
    t.same(replaced.sort(), ['T|d1|a', 'T|d1|d']);
    t.same(deleted, ['T|d1|b']);
    t.same(await scope('T', 'd1'), [a2, { ...c, gap: null }, d]);
  });

  await t.test('a number of another type, or a field added, is a change', async (t) => {
    const now = await scope('T', 'd1');
    const [a2, c2, d] = now as [Entry, Entry, Entry];
    // 4 and 4.5 differ; an integer stored as a double (written by another tool) is rewritten once, then left.
    await coll.updateOne({ _id: 'T|d1|d' }, { $set: { n: new BSON.Double(4) as unknown as number } });
    await keep('T', 'd1', [a2, c2, { ...d, share: 1 }]);
    t.same(replaced, ['T|d1|d']);
    await keep('T', 'd1', [a2, c2, { ...d, share: 1 }]);
    t.same(replaced, []);
  });

  await t.test('an entry stored with its fields in another order is rewritten, its content unchanged', async (t) => {
    await coll.deleteMany({ tenant: 'T', day: 'd3' });
    await coll.insertOne({ n: 5, day: 'd3', tenant: 'T', _id: 'T|d3|a' });
    const e: Entry = { _id: 'T|d3|a', tenant: 'T', day: 'd3', n: 5 };
    await keep('T', 'd3', [e]);
    // Not the same bytes. (MongoDB then keeps the canonical order; the embedded engine keeps a document's
    // field order when a replacement's content is equal, so there it is written again on every keep.)
    t.same(replaced, ['T|d3|a']);
    t.same(deleted, []);
    t.same(await scope('T', 'd3'), [e]);
  });

  await t.test('other scopes are untouched', async (t) => {
    await keep('T', 'd1', []);
    t.same(deleted.sort(), ['T|d1|a', 'T|d1|c', 'T|d1|d']);
    t.same(await scope('T', 'd1'), []);
    t.same(await scope('U', 'd1'), [other]);
    t.same(await scope('T', 'd2'), [elsewhere]);
  });

  await t.test('an entry moved to another scope between the read and the delete is left there', async (t) => {
    // Another recompute (of day d9) upserts the same _id while this keep of d4 deletes what d4 no longer computes.
    const moving: Entry = { _id: 'T|x|moving', tenant: 'T', day: 'd4', n: 1 };
    await coll.insertOne(moving);
    deleted = [];
    const racing = Object.create(recorded) as Collection<Entry>;
    racing.deleteMany = async (filter: { _id: { $in: string[] } }, opts?: object) => {
      await coll.replaceOne({ _id: moving._id }, { ...moving, day: 'd9' });
      return recorded.deleteMany(filter, opts);
    };
    await replaceScoped(racing, 'T', { tenant: 'T', day: 'd4' }, [], 60_000);
    t.same(deleted, [moving._id], 'd4 no longer holds it');
    t.same(await scope('T', 'd9'), [{ ...moving, day: 'd9' }], 'd9 keeps it');
  });

  t.test('rawId reads a leading string _id, and decodes any other layout', async (t) => {
    t.equal(rawId(BSON.serialize({ _id: 'TGO|2026-01|ñ', x: 1 })), 'TGO|2026-01|ñ');
    t.equal(rawId(BSON.serialize({ x: 1, _id: 'late' })), 'late');
    t.equal(rawId(BSON.serialize({ _id: 42 })), 42);
    t.equal(rawId(BSON.serialize({ _id: '' })), '');
  });
}
