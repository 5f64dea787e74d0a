/**
 * The delivery rule is written twice: lib/trips/delivery-state.ts for legs in
 * memory and legDeliveredAtExpr (lib/db/pipeline.ts) inside the audits'
 * pipelines. Both run here on the same legs, the pipeline through the real
 * engine, and must agree: a leg is delivered (its delivery instant is its
 * unloadDate) when the unload instant and every product's offloaded litres are
 * numbers; otherwise it is in transit (null).
 */
import type { Test } from 'tap';
import fc from 'fast-check';
import type { Document } from 'mongodb';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { legDeliveredAtExpr } from '../../lib/db/pipeline.ts';
import { legDeliveredAt, type DeliveryFields } from '../../lib/trips/delivery-state.ts';

export default async function deliveryRuleTests(t: Test): Promise<void> {
  const engine = await startEmbeddedMongo({ shortLived: true });
  const { client, db } = await connectMongo(engine.uri, 'deliveryrule', { serverSelectionTimeoutMS: 5000 });
  t.teardown(async () => {
    await client.close(true);
    await engine.stop();
  });

  const AT = 1_772_000_000_000;
  const p = (offloaded?: number | null): { code: string; loaded: number; offloaded?: number | null } =>
    offloaded === undefined ? { code: '15101505', loaded: 1000 } : { code: '15101505', loaded: 1000, offloaded };

  const cases: [string, Document, number | null][] = [
    ['delivered, one product', { unloadDate: AT, products: [p(990)] }, AT],
    ['delivered, nothing offloaded (a real 100% loss)', { unloadDate: AT, products: [p(0)] }, AT],
    ['delivered, two products', { unloadDate: AT, products: [p(990), p(1001)] }, AT],
    ['delivered, no products', { unloadDate: AT, products: [] }, AT],
    ['in transit: no unload instant, offloaded null', { unloadDate: null, products: [p(null)] }, null],
    ['in transit as older versions stored it: offloaded 0', { unloadDate: null, products: [p(0)] }, null],
    ['an unload instant but one product without volume', { unloadDate: AT, products: [p(990), p(null)] }, null],
    ['an unload instant, offloaded missing', { unloadDate: AT, products: [p()] }, null],
    ['unloadDate missing', { products: [p(990)] }, null],
    ['unloadDate not a number', { unloadDate: '2026-03-01', products: [p(990)] }, null],
    ['offloaded not a number', { unloadDate: AT, products: [p(990), { code: '15101505', loaded: 1, offloaded: '990' }] }, null],
  ];

  /** The pipeline's verdict per _id, with the leg under a `$map` variable as the audits read it. */
  async function pipelineVerdicts(legs: Document[]): Promise<(number | null)[]> {
    const coll = db.collection(`legs_${Math.random().toString(36).slice(2)}`);
    await coll.insertOne({ _id: 'trip' as never, shipments: legs });
    const [row] = await coll
      .aggregate<{ at: (number | null)[] }>([{ $project: { at: { $map: { input: '$shipments', as: 'l', in: legDeliveredAtExpr('$$l') } } } }])
      .toArray();
    await coll.drop();
    return row!.at;
  }

  t.test('the two forms agree on each case', async (t) => {
    const verdicts = await pipelineVerdicts(cases.map(([, leg]) => leg));
    cases.forEach(([name, leg, expected], i) => {
      t.equal(legDeliveredAt(leg as DeliveryFields), expected, `in memory: ${name}`);
      t.equal(verdicts[i], expected, `pipeline: ${name}`);
    });
  });

  t.test('the two forms agree on generated legs', async (t) => {
    const num = fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 60_000 }), fc.constant(undefined));
    const leg = fc.record({
      unloadDate: fc.oneof(fc.constant(null), fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 })),
      products: fc.array(
        num.map((o) => p(o)),
        { maxLength: 3 },
      ),
    });
    const legs = fc.sample(fc.array(leg, { minLength: 1, maxLength: 40 }), { numRuns: 1, seed: 21 })[0]!;
    const verdicts = await pipelineVerdicts(legs);
    t.same(
      verdicts,
      legs.map((l) => legDeliveredAt(l as DeliveryFields)),
      `${legs.length} legs`,
    );
  });
}
