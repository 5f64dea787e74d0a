/**
 * lib/db/replace-scoped.ts: a scope of kept entries made to hold exactly a computed set. What it
 * writes is seen on the collection it is handed (its insertMany, bulkWrite and deleteMany recorded,
 * then passed on to the engine): an unchanged entry is not written again, a changed one always is;
 * an entry the scope did not hold is inserted, and replaced only when its _id turns out to be taken.
 */
import type { Test } from 'tap';
import { BSON, type AnyBulkWriteOperation, type Collection } from 'mongodb';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { putChanged, rawId, replaceScoped } from '../../lib/db/replace-scoped.ts';

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
  let inserted: string[] = [];
  let replaced: string[] = [];
  let deleted: string[] = [];
  const recorded = Object.create(coll) as Collection<Entry>;
  recorded.insertMany = (docs: readonly Entry[], opts?: Parameters<Collection<Entry>['insertMany']>[1]) => {
    inserted.push(...docs.map((d) => d._id));
    return coll.insertMany(docs, opts);
  };
  recorded.bulkWrite = (ops: readonly AnyBulkWriteOperation<Entry>[], opts?: Parameters<Collection<Entry>['bulkWrite']>[1]) => {
    for (const op of ops) if ('replaceOne' in op) replaced.push(String((op.replaceOne.filter as { _id: string })._id));
    return coll.bulkWrite(ops, opts);
  };
  recorded.deleteMany = (filter: { _id: { $in: string[] } }, opts?: object) => {
    deleted.push(...filter._id.$in);
    return coll.deleteMany(filter, opts);
  };
  const keep = async (tenant: string, day: string, docs: Entry[]): Promise<void> => {
    inserted = [];
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

  await t.test('a first keep inserts every entry', async (t) => {
    await keep('T', 'd1', [a, b, c]);
    t.same(inserted.sort(), ['T|d1|a', 'T|d1|b', 'T|d1|c']);
    t.same(replaced, []);
    t.same(deleted, []);
    // `gap: undefined` is kept as null (the driver's default), as any write of it would be.
    t.same(await scope('T', 'd1'), [a, b, { ...c, gap: null }]);
  });

  await t.test('the same entries again: nothing written, nothing deleted', async (t) => {
    await keep('T', 'd1', [a, b, c]);
    t.same(inserted, []);
    t.same(replaced, []);
    t.same(deleted, []);
    // In another order too.
    await keep('T', 'd1', [c, a, b]);
    t.same([...inserted, ...replaced], []);
  });

  await t.test('one changed deep inside, one gone, one new', async (t) => {
    const a2: Entry = { ...a, nested: { list: [1, 2.5, -4], label: null } };
    const d: Entry = { _id: 'T|d1|d', tenant: 'T', day: 'd1', n: 4 };
    await keep('T', 'd1', [a2, c, d]);
    t.same(replaced, ['T|d1|a'], 'the changed one replaced');
    t.same(inserted, ['T|d1|d'], 'the new one inserted');
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
    t.same(inserted, []);
    await keep('T', 'd1', [a2, c2, { ...d, share: 1 }]);
    t.same([...inserted, ...replaced], []);
  });

  await t.test('an entry stored with its fields in another order is rewritten, its content unchanged', async (t) => {
    await coll.deleteMany({ tenant: 'T', day: 'd3' });
    await coll.insertOne({ n: 5, day: 'd3', tenant: 'T', _id: 'T|d3|a' });
    const e: Entry = { _id: 'T|d3|a', tenant: 'T', day: 'd3', n: 5 };
    await keep('T', 'd3', [e]);
    // Not the same bytes. (MongoDB then keeps the canonical order; the embedded engine keeps a document's
    // field order when a replacement's content is equal, so there it is written again on every keep.)
    t.same(replaced, ['T|d3|a']);
    t.same(inserted, []);
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

  await t.test('an entry another scope holds is replaced there, not refused', async (t) => {
    // Day d2 holds T|d2|a; a keep of d5 computes the same _id (its entry moved day): the insert meets the _id index.
    const moved: Entry = { ...elsewhere, day: 'd5', n: 10 };
    const fresh: Entry = { _id: 'T|d5|b', tenant: 'T', day: 'd5', n: 11 };
    await keep('T', 'd5', [moved, fresh]);
    t.same(inserted.sort(), ['T|d2|a', 'T|d5|b'], 'both tried as new');
    t.same(replaced, ['T|d2|a'], 'the taken _id replaced');
    t.same(await scope('T', 'd5'), [moved, fresh]);
    t.same(await scope('T', 'd2'), []);
  });

  await t.test('an entry a write stores between the read and the insert is replaced with what was computed', async (t) => {
    const racer: Entry = { _id: 'T|d6|a', tenant: 'T', day: 'd6', n: 1 };
    const computed: Entry = { ...racer, n: 2 };
    const racing = Object.create(recorded) as Collection<Entry>;
    racing.insertMany = async (docs: readonly Entry[], opts?: Parameters<Collection<Entry>['insertMany']>[1]) => {
      await coll.insertOne(racer);
      return recorded.insertMany(docs, opts);
    };
    inserted = [];
    replaced = [];
    await replaceScoped(racing, 'T', { tenant: 'T', day: 'd6' }, [computed, { _id: 'T|d6|b', tenant: 'T', day: 'd6', n: 3 }], 60_000);
    t.same(replaced, ['T|d6|a']);
    t.same(await scope('T', 'd6'), [computed, { _id: 'T|d6|b', tenant: 'T', day: 'd6', n: 3 }], 'the other one of the batch inserted too');
  });

  await t.test('an insert refused for another reason is an error', async (t) => {
    const refusing = Object.create(recorded) as Collection<Entry>;
    refusing.insertMany = () => Promise.reject(new Error('disk full'));
    await t.rejects(replaceScoped(refusing, 'T', { tenant: 'T', day: 'd7' }, [{ _id: 'T|d7|a', tenant: 'T', day: 'd7', n: 1 }], 60_000), /disk full/);
  });

  await t.test('putChanged writes what its ids do not hold as computed, and deletes nothing', async (t) => {
    const p1: Entry = { _id: 'T|p|1', tenant: 'T', day: 'p', n: 1 };
    const p2: Entry = { _id: 'T|p|2', tenant: 'T', day: 'p', n: 2, nested: { list: [0.5], label: 'y' } };
    const put = async (docs: Entry[]): Promise<void> => {
      inserted = [];
      replaced = [];
      deleted = [];
      await putChanged(recorded, 'T', docs, 60_000);
    };
    await put([p1, p2]);
    t.same([inserted.sort(), replaced], [['T|p|1', 'T|p|2'], []], 'new ones inserted');
    await put([p2, p1]);
    t.same([inserted, replaced], [[], []], 'the same again: nothing written');
    const p2b: Entry = { ...p2, nested: { list: [0.75], label: 'y' } };
    const p3: Entry = { _id: 'T|p|3', tenant: 'T', day: 'p', n: 3 };
    await put([p2b, p3]);
    t.same([inserted, replaced], [['T|p|3'], ['T|p|2']], 'the changed one replaced, the new one inserted');
    t.same(deleted, []);
    t.same(await scope('T', 'p'), [p1, p2b, p3], 'one left out of a put is kept');
    // More than a write's batch: each batch compared with what its own ids hold.
    const many: Entry[] = Array.from({ length: 2500 }, (_, i) => ({ _id: `T|q|${String(i).padStart(4, '0')}`, tenant: 'T', day: 'q', n: i }));
    await put(many);
    t.equal(inserted.length, 2500);
    await put(many.map((e) => (e.n % 1000 === 7 ? { ...e, n: -1 } : e)));
    t.same([inserted, replaced], [[], ['T|q|0007', 'T|q|1007', 'T|q|2007']]);
    t.equal(await coll.countDocuments({ tenant: 'T', day: 'q', n: -1 }), 3);
  });

  t.test('rawId reads a leading string _id, and decodes any other layout', async (t) => {
    t.equal(rawId(BSON.serialize({ _id: 'TGO|2026-01|ñ', x: 1 })), 'TGO|2026-01|ñ');
    t.equal(rawId(BSON.serialize({ x: 1, _id: 'late' })), 'late');
    t.equal(rawId(BSON.serialize({ _id: 42 })), 42);
    t.equal(rawId(BSON.serialize({ _id: '' })), '');
  });
}
