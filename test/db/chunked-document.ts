/**
 * lib/db/chunked-document.ts: a document larger than MongoDB's 16 MiB limit kept as a head and
 * chunks, through the engine. Its byte layout is checked against bytes written out by hand; a
 * rewrite, a reader racing a write, concurrent writers and a crashed writer's leftovers against
 * what the collection then holds.
 */
import type { Test } from 'tap';
import { createHash } from 'node:crypto';
import type { Collection } from 'mongodb';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import {
  CHUNK_BYTES,
  ORPHAN_AFTER_MS,
  decodePart,
  deleteChunked,
  encodePart,
  readChunked,
  splitBytes,
  writeChunked,
  type ChunkedCollection,
} from '../../lib/db/chunked-document.ts';

interface Head {
  _id: string;
  tenant: string;
  month: string;
}

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

export default async function chunkedDocumentTests(t: Test): Promise<void> {
  t.test('a part as bytes: header length, header, fields (written out by hand)', async (t) => {
    const header = '[["a","s",3],["b","b",3]]';
    const expected = [header.length, 0, 0, 0, ...Buffer.from(header, 'latin1'), 0x68, 0xc3, 0xa9, 1, 2, 3];
    const bytes = encodePart({ a: 'hé', b: new Uint8Array([1, 2, 3]) });
    t.same([...bytes], expected);
    const back = decodePart(bytes);
    t.equal(back.a, 'hé');
    t.same([...(back.b as Uint8Array)], [1, 2, 3]);
    t.same(decodePart(encodePart({})), {});
    t.throws(() => decodePart(bytes.subarray(0, bytes.length - 1)), /malformed: field b beyond/);
    t.throws(() => decodePart(new Uint8Array([...bytes, 0])), /malformed: bytes after the last field/);
    t.throws(() => decodePart(new Uint8Array([200, 0, 0, 0, 1])), /malformed: header beyond/);
    t.throws(() => decodePart(new Uint8Array([2, 0, 0, 0, 0x7b, 0x7d])), /malformed: header not a list/);
  });

  t.test('bytes split in pieces of at most the size', async (t) => {
    t.same(
      splitBytes(new Uint8Array(10), 4).map((p) => p.length),
      [4, 4, 2],
    );
    t.same(
      splitBytes(new Uint8Array(8), 4).map((p) => p.length),
      [4, 4],
    );
    t.same(
      splitBytes(new Uint8Array(0), 4).map((p) => p.length),
      [0],
    );
    t.throws(() => splitBytes(new Uint8Array(1), 0), RangeError);
  });

  const engine = await startEmbeddedMongo({ shortLived: true });
  t.teardown(() => engine.stop());
  const { client, db } = await connectMongo(engine.uri, 'chunked');
  t.teardown(() => client.close());
  const coll: ChunkedCollection = db.collection('kept');
  const head: Head = { _id: 'T|2026-10', tenant: 'T', month: '2026-10' };
  /** Every chunk of the head (ids after its own, then `|`), and the stamps they carry. */
  const chunks = async (headId = head._id) =>
    (await coll.find({ _id: { $gt: `${headId}|`, $lt: `${headId}}` } }).toArray()) as { _id: string; stamp: string }[];
  // Neighbours a range over the head's chunks must not touch: a day of the month, another tenant's month.
  await coll.insertMany([
    { _id: 'T|2026-10-01', tenant: 'T' },
    { _id: 'U|2026-10', tenant: 'U' },
  ]);

  await t.test('a part larger than a document can be is kept and read back whole', async (t) => {
    // 20 MiB of bytes that are not all alike, and text beside them.
    const big = new Uint8Array(20 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 24;
    await writeChunked(coll, head, { big: { bytes: big, note: 'x'.repeat(1000) }, small: { text: '[1,2]' } });
    const stored = await coll.findOne({ _id: head._id });
    t.match(stored, { month: '2026-10', chunks: { big: 6, small: 1 } }, '20 MiB and its header in 4 MiB chunks: 6');
    t.equal((await chunks()).length, 7);
    const read = await readChunked<Head>(coll, 'T', head._id, ['big', 'small'], 60_000);
    t.equal(read?.head.month, '2026-10');
    t.equal(sha(read?.parts.big?.bytes as Uint8Array), sha(big));
    t.equal(read?.parts.big?.note, 'x'.repeat(1000));
    t.same(read?.parts.small, { text: '[1,2]' });
    const one = await readChunked<Head>(coll, 'T', head._id, ['small'], 60_000);
    t.same(Object.keys(one?.parts ?? {}), ['small'], 'only the parts asked for');
    await t.rejects(readChunked(coll, 'T', head._id, ['other'], 60_000), /no part other kept/);
    t.equal(await readChunked(coll, 'U', head._id, ['small'], 60_000), null, "another tenant's read finds nothing");
    t.equal(CHUNK_BYTES, 4 * 1024 * 1024);
  });

  await t.test('a rewrite leaves the new chunks only', async (t) => {
    const before = (await coll.findOne({ _id: head._id })) as { stamp: string } | null;
    await writeChunked(coll, head, { small: { text: 'new' } }, { chunkBytes: 2 });
    const after = (await coll.findOne({ _id: head._id })) as { stamp: string; chunks: Record<string, number> } | null;
    t.not(after?.stamp, before?.stamp);
    t.same(after?.chunks, { small: Math.ceil(encodePart({ text: 'new' }).length / 2) });
    const left = await chunks();
    t.equal(left.length, after?.chunks.small);
    t.ok(
      left.every((c) => c.stamp === after?.stamp),
      'no chunk of the displaced stamp left',
    );
    t.same((await readChunked<Head>(coll, 'T', head._id, ['small'], 60_000))?.parts.small, { text: 'new' });
    t.equal(await coll.countDocuments({ _id: { $in: ['T|2026-10-01', 'U|2026-10'] } }), 2, 'neighbours untouched');
  });

  await t.test('a reader whose head a write replaced meanwhile reads again', async (t) => {
    // The first head read returns the head as it was, then a write replaces it (and deletes its chunks).
    let raced = false;
    const racing = Object.create(coll) as ChunkedCollection;
    racing.findOne = (async (...args: Parameters<Collection['findOne']>) => {
      const found = await (coll.findOne as (...a: unknown[]) => Promise<unknown>)(...args);
      if (!raced) {
        raced = true;
        await writeChunked(coll, head, { small: { text: 'raced' } });
      }
      return found;
    }) as ChunkedCollection['findOne'];
    const read = await readChunked<Head>(racing, 'T', head._id, ['small'], 60_000);
    t.ok(raced);
    t.same(read?.parts.small, { text: 'raced' });
  });

  await t.test('chunks missing in every read: an error, not a wrong document', async (t) => {
    await writeChunked(coll, { _id: 'T|2026-11', tenant: 'T', month: '2026-11' }, { small: { text: 'gone' } });
    await coll.deleteMany({ _id: { $gt: 'T|2026-11|', $lt: 'T|2026-11}' } });
    await t.rejects(readChunked(coll, 'T', 'T|2026-11', ['small'], 60_000), /chunks of stamp \w+ missing after 3 reads/);
  });

  await t.test('concurrent writers leave one head and its chunks', async (t) => {
    await Promise.all([1, 2, 3, 4, 5].map((n) => writeChunked(coll, head, { small: { text: `w${n}` } }, { chunkBytes: 8 })));
    const now = (await coll.findOne({ _id: head._id })) as { stamp: string; chunks: Record<string, number> } | null;
    const left = await chunks();
    t.equal(left.length, now?.chunks.small);
    t.ok(left.every((c) => c.stamp === now?.stamp));
    t.match((await readChunked<Head>(coll, 'T', head._id, ['small'], 60_000))?.parts.small, { text: /^w[1-5]$/ });
  });

  await t.test("a crashed writer's chunks are deleted once old, a running writer's are not", async (t) => {
    const now = Date.now();
    await coll.insertMany([
      { _id: `${head._id}|crashed|small|0`, tenant: 'T', stamp: 'crashed', at: new Date(now - ORPHAN_AFTER_MS - 1000) },
      { _id: `${head._id}|running|small|0`, tenant: 'T', stamp: 'running', at: new Date(now - 1000) },
    ] as never[]);
    await writeChunked(coll, head, { small: { text: 'after' } }, { now: () => now });
    const stamps = new Set((await chunks()).map((c) => c.stamp));
    t.notOk(stamps.has('crashed'));
    t.ok(stamps.has('running'));
    t.equal(stamps.size, 2);
  });

  await t.test('deleting a head forgets it and its chunks, not its neighbours', async (t) => {
    await deleteChunked(coll, 'T', head._id);
    t.equal(await coll.countDocuments({ _id: head._id }), 0);
    t.same(await chunks(), []);
    t.equal(await readChunked(coll, 'T', head._id, ['small'], 60_000), null);
    t.equal(await coll.countDocuments({ _id: { $in: ['T|2026-10-01', 'U|2026-10'] } }), 2);
    await t.rejects(writeChunked(coll, { ...head, stamp: 'mine' } as Head, {}), TypeError);
  });
}
