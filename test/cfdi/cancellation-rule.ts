/**
 * The invoice-cancellation rule is written twice: lib/finance/cancellation.ts
 * for documents in memory and invoiceCancelledExpr (lib/db/pipeline.ts) inside
 * aggregation pipelines. Both run here on the same documents, the pipeline
 * through the real engine, and must agree: a document is cancelled when a
 * cancellation record of target 'invoice' names its current UUID, compared
 * case-insensitively and otherwise exactly, and is in effect: status accepted
 * or expired, or no status (a record written before statuses existed); a
 * pending or rejected one cancels nothing.
 */
import type { Test } from 'tap';
import fc from 'fast-check';
import type { Document } from 'mongodb';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { invoiceCancelledExpr } from '../../lib/db/pipeline.ts';
import { isInvoiceCancelled } from '../../lib/finance/cancellation.ts';
import type { CanceledRecord, CancellationRecordStatus } from '../../lib/model/financial-document.ts';

export default async function cancellationRuleTests(t: Test): Promise<void> {
  const engine = await startEmbeddedMongo({ shortLived: true });
  const { client, db } = await connectMongo(engine.uri, 'cancelrule', { serverSelectionTimeoutMS: 5000 });
  t.teardown(async () => {
    await client.close(true);
    await engine.stop();
  });

  interface Doc {
    _id: string;
    invoice: { uuid: string };
    canceled: CanceledRecord[];
  }

  const UUID = '5FB2822E-396D-4725-8521-CDC4BDD20CCF';
  const OTHER = 'A1B2C3D4-0000-4000-8000-000000000001';
  const record = (target: 'invoice' | 'payment', uuid: string, status?: CancellationRecordStatus, date = 1_770_000_000_000): CanceledRecord => ({
    id: `cx-${target}-${uuid}`,
    target,
    uuid,
    date,
    motive: '02',
    replacementUuid: null,
    ...(status ? { status } : {}),
  });

  const cases: [string, Omit<Doc, '_id'>, boolean][] = [
    ['no cancellation record', { invoice: { uuid: UUID }, canceled: [] }, false],
    ['its own UUID', { invoice: { uuid: UUID }, canceled: [record('invoice', UUID)] }, true],
    ['its own UUID in lower case', { invoice: { uuid: UUID }, canceled: [record('invoice', UUID.toLowerCase())] }, true],
    ['stored UUID in lower case', { invoice: { uuid: UUID.toLowerCase() }, canceled: [record('invoice', UUID)] }, true],
    [
      'a replaced predecessor (motive 01) only',
      { invoice: { uuid: UUID }, canceled: [{ ...record('invoice', OTHER), motive: '01', replacementUuid: UUID }] },
      false,
    ],
    ['a payment cancellation naming the invoice UUID', { invoice: { uuid: UUID }, canceled: [record('payment', UUID)] }, false],
    ['a predecessor and its own', { invoice: { uuid: UUID }, canceled: [record('invoice', OTHER), record('invoice', UUID)] }, true],
    ['UUID with surrounding spaces (not the same UUID)', { invoice: { uuid: UUID }, canceled: [record('invoice', ` ${UUID} `)] }, false],
    ['accepted', { invoice: { uuid: UUID }, canceled: [record('invoice', UUID, 'accepted')] }, true],
    ['expired (tacit acceptance)', { invoice: { uuid: UUID }, canceled: [record('invoice', UUID, 'expired')] }, true],
    ['pending (a request cancels nothing)', { invoice: { uuid: UUID }, canceled: [record('invoice', UUID, 'pending')] }, false],
    ['rejected by the receiver', { invoice: { uuid: UUID }, canceled: [record('invoice', UUID, 'rejected')] }, false],
    [
      'a rejected request and an accepted one',
      { invoice: { uuid: UUID }, canceled: [record('invoice', UUID, 'rejected'), record('invoice', UUID.toLowerCase(), 'accepted')] },
      true,
    ],
  ];

  /** The pipeline's verdict per _id, with the expression at the root and under a variable (as after a $lookup). */
  async function pipelineVerdicts(docs: Doc[]): Promise<Map<string, { root: boolean; variable: boolean }>> {
    const coll = db.collection<Doc>(`docs_${Math.random().toString(36).slice(2)}`);
    await coll.insertMany(docs);
    const pipeline: Document[] = [
      {
        $project: {
          root: invoiceCancelledExpr(),
          variable: {
            $arrayElemAt: [{ $map: { input: [{ invoice: '$invoice', canceled: '$canceled' }], as: 'd', in: invoiceCancelledExpr(undefined, '$$d.') } }, 0],
          },
        },
      },
    ];
    const rows = await coll.aggregate<{ _id: string; root: boolean; variable: boolean }>(pipeline).toArray();
    await coll.drop();
    return new Map(rows.map((r) => [r._id, { root: r.root === true, variable: r.variable === true }]));
  }

  t.test('both rules on hand-picked documents', async (t) => {
    const docs = cases.map(([name, d]) => ({ _id: name, ...d }));
    const verdicts = await pipelineVerdicts(docs);
    for (const [name, d, expected] of cases) {
      t.equal(isInvoiceCancelled(d), expected, `lib/finance: ${name}`);
      t.same(verdicts.get(name), { root: expected, variable: expected }, `pipeline: ${name}`);
    }
  });

  t.test('both rules agree on generated documents', async (t) => {
    const uuidVariant = fc.constantFrom(UUID, UUID.toLowerCase(), OTHER, OTHER.toLowerCase(), ` ${UUID}`, `${UUID.slice(0, 8)}x${UUID.slice(9)}`);
    const docArb = fc.record({
      invoice: fc.record({ uuid: fc.constantFrom(UUID, UUID.toLowerCase(), OTHER) }),
      canceled: fc.array(
        fc
          .tuple(
            fc.constantFrom<'invoice' | 'payment'>('invoice', 'payment'),
            uuidVariant,
            fc.constantFrom<CancellationRecordStatus | undefined>(undefined, 'pending', 'accepted', 'rejected', 'expired'),
          )
          .map(([target, uuid, status]) => record(target, uuid, status)),
        { maxLength: 3 },
      ),
    });
    const docs: Doc[] = fc.sample(docArb, { numRuns: 300, seed: 14 }).map((d, i) => ({ _id: `g${i}`, ...d }));
    const verdicts = await pipelineVerdicts(docs);
    const disagreements = docs.filter((d) => {
      const v = verdicts.get(d._id)!;
      const js = isInvoiceCancelled(d);
      return v.root !== js || v.variable !== js;
    });
    t.same(disagreements, [], 'no document where the two rules differ');
    t.ok(docs.some((d) => isInvoiceCancelled(d)) && docs.some((d) => !isInvoiceCancelled(d)), 'the sample has both outcomes');
  });
}
