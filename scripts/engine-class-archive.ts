/**
 * Writes the embedded engine's class-data archive (AppCDS, scripts/embedded-mongo/launcher.ts
 * DEFAULT_ENGINE_CLASS_ARCHIVE): starts the engine with -XX:ArchiveClassesAtExit, runs a short
 * session through the driver so the classes of the wire protocol, the query matcher, the indexes and
 * the aggregation stages are loaded, and stops it; the JVM writes the archive as it exits. Run by
 * scripts/setup.mjs after it builds the jar (about 3 s); `npm run setup` redoes it when the jar is
 * newer than the archive. Without an archive the engine starts as before, only slower.
 */
import { rename, rm } from 'node:fs/promises';
import { MongoClient } from 'mongodb';
import { DEFAULT_ENGINE_CLASS_ARCHIVE, startEmbeddedMongo } from './embedded-mongo/launcher.ts';

const target = DEFAULT_ENGINE_CLASS_ARCHIVE;
const partial = `${target}.${process.pid}.tmp`;
// A JVM cannot map one dynamic archive and write another: the old one goes first.
await rm(target, { force: true });
process.env.EMBEDDED_MONGO_JAVA_OPTS = `${process.env.EMBEDDED_MONGO_JAVA_OPTS ?? ''} -XX:ArchiveClassesAtExit=${partial} -Xlog:cds=off -Xlog:cds+dynamic=off`;

const engine = await startEmbeddedMongo({ shortLived: true });
const client = new MongoClient(engine.uri, { directConnection: true });
try {
  await client.connect();
  const db = client.db('class-archive');
  const docs = db.collection<{ _id?: unknown; company: string; n: number; at: Date; legs: { unloadDate: number | null; litres: number }[] }>('docs');
  await docs.createIndex({ company: 1, at: -1 });
  await docs.createIndex({ company: 1, 'legs.unloadDate': 1 });
  await docs.createIndex({ company: 1, n: 1 }, { unique: true });
  await docs.insertMany(
    Array.from({ length: 200 }, (_, n) => ({
      company: n % 2 ? 'A' : 'B',
      n,
      at: new Date(Date.UTC(2026, 0, 1 + n)),
      legs: [{ unloadDate: n % 3 ? Date.UTC(2026, 1, n % 28) : null, litres: n * 10 }],
    })),
  );
  await docs
    .find({ company: 'A', at: { $gte: new Date('2026-02-01') } })
    .sort({ at: -1, _id: -1 })
    .limit(20)
    .toArray();
  await docs.countDocuments({ company: 'A', legs: { $elemMatch: { unloadDate: { $gte: 0 } } } });
  await docs.updateOne({ company: 'A', n: 1 }, { $set: { 'legs.0.litres': 5 }, $inc: { n: 1000 } });
  await docs.findOneAndUpdate({ company: 'B', n: { $lt: 50 } }, { $set: { at: new Date() } }, { sort: { at: 1 }, returnDocument: 'after' });
  await docs
    .aggregate([
      { $match: { company: 'A' } },
      { $unwind: '$legs' },
      { $group: { _id: { $month: '$at' }, litres: { $sum: '$legs.litres' }, count: { $sum: 1 } } },
      { $lookup: { from: 'docs', localField: '_id', foreignField: 'n', as: 'same' } },
      { $addFields: { share: { $cond: [{ $gt: ['$count', 0] }, { $divide: ['$litres', '$count'] }, 0] } } },
      { $project: { same: 0 } },
      { $sort: { _id: 1 } },
    ])
    .toArray();
  await docs.distinct('company');
  await docs.deleteMany({ n: { $gte: 150 } });
  await db.dropDatabase();
} finally {
  await client.close();
  await engine.stop(); // the JVM writes the archive as it exits
}
await rename(partial, target);
console.log(`engine class archive written: ${target}`);
