import t from 'tap';
import { applyLegDelivery, deliveredLeg, MAX_GAIN_PCT } from '../../lib/trips/leg-delivery.ts';
import { keepRecordedDeliveries } from '../../lib/trips/recorded-deliveries.ts';
import { makeTrip, leg, diesel, gasoline } from '../fixtures/documents.ts';

const NOW = Date.parse('2026-03-20T18:00:00Z');
const AT = Date.parse('2026-03-10T15:00:00Z');
// Two compartments of diesel and one of gasoline, on the road.
const trip = makeTrip({
  legs: [
    leg({
      shipment: 'S-1',
      loadDate: '2026-03-09T08:00',
      unloadDate: null,
      status: 2,
      products: [diesel(20_000, null), gasoline(10_000, null), diesel(5_000, null)],
    }),
  ],
});
const road = trip.shipments[0]!;

t.test('products are matched by code, in order; litres to the millilitre', async (t) => {
  const out = deliveredLeg(
    road,
    {
      offloadDate: AT,
      ticket: 'T-1',
      products: [
        { code: '15101505', offloaded: 19_960.0004 },
        { code: '15101514', offloaded: 9_990 },
        { code: '15101505', offloaded: 5_000 },
      ],
    },
    NOW,
  );
  if (!('leg' in out)) throw new Error(JSON.stringify(out));
  t.same(
    out.leg.products.map((p) => [p.code, p.loaded, p.offloaded]),
    [
      ['15101505', 20_000, 19_960],
      ['15101514', 10_000, 9_990],
      ['15101505', 5_000, 5_000],
    ],
  );
  t.match(out.leg, { unloadDate: AT, status: 4, delivery: { source: 'recorded', ticket: 'T-1' } });
  const swapped = deliveredLeg(
    road,
    {
      offloadDate: AT,
      ticket: null,
      products: [
        { code: '15101505', offloaded: 4_990 },
        { code: '15101505', offloaded: 19_990 },
        { code: '15101514', offloaded: 9_990 },
      ],
    },
    NOW,
  );
  t.match(
    swapped,
    { problems: [{ field: 'products.1.offloaded', product: 1 }] },
    'the first diesel line is the 20,000 L compartment: 4,990 fits, then 19,990 is far above 5,000',
  );
});

t.test(`the bound: at most ${MAX_GAIN_PCT}% above the loaded litres`, async (t) => {
  const one = (offloaded: number) =>
    deliveredLeg({ ...road, products: [diesel(20_000, null)] }, { offloadDate: AT, ticket: null, products: [{ code: '15101505', offloaded }] }, NOW);
  t.ok('leg' in one(21_000), '21,000 = 20,000 + 5%: accepted');
  t.ok('leg' in one(0), 'nothing offloaded: a total loss, accepted');
  t.match(one(21_000.001), {
    problems: [
      { field: 'products.0.offloaded', message: 'offloaded 21000.001 L of product 15101505 is more than 5% above the 20000 L loaded (at most 21000 L)' },
    ],
  });
  t.match(one(Number.NaN), { problems: [{ field: 'products.0.offloaded' }] });
});

t.test('missing, repeated and unknown products; dates', async (t) => {
  const out = deliveredLeg(
    road,
    {
      offloadDate: Date.parse('2026-03-09T13:00:00Z'),
      ticket: null,
      products: [
        { code: '15101505', offloaded: 1 },
        { code: '15101505', offloaded: 1 },
        { code: '15101505', offloaded: 1 },
        { code: '15101515', offloaded: 1 },
      ],
    },
    NOW,
  );
  t.same('problems' in out ? out.problems.map((p) => `${p.field}: ${p.message}`) : [], [
    'offloadDate: offloadDate 2026-03-09T13:00:00.000Z is before the leg was loaded (2026-03-09T14:00:00.000Z)',
    'products.2.code: product 15101505 is given 3 times; leg S-1 carries it 2 times',
    'products.3.code: leg S-1 does not carry product 15101515 (it carries 15101505, 15101514)',
    'products: product 15101514 of leg S-1 is missing: every product of the leg needs its offloaded litres',
  ]);
  const half = deliveredLeg(
    road,
    {
      offloadDate: AT,
      ticket: null,
      products: [
        { code: '15101505', offloaded: 1 },
        { code: '15101514', offloaded: 1 },
      ],
    },
    NOW,
  );
  t.match(half, { problems: [{ field: 'products', message: /product 15101505 of leg S-1 is missing \(1 of its 2 lines\)/ }] });
  t.match(deliveredLeg(road, { offloadDate: NOW + 5 * 60_000 + 1, ticket: null, products: [] }, NOW), {
    problems: [{ field: 'offloadDate', message: /is in the future$/ }],
  });
  t.notMatch(
    deliveredLeg(road, { offloadDate: NOW + 5 * 60_000, ticket: null, products: [] }, NOW),
    { problems: [{ field: 'offloadDate' }] },
    'five minutes of clock difference are fine',
  );
});

t.test('applying: unknown leg, unchanged, applied', async (t) => {
  const input = {
    offloadDate: AT,
    ticket: 'T-1',
    products: [
      { code: '15101505', offloaded: 19_960 },
      { code: '15101514', offloaded: 9_990 },
      { code: '15101505', offloaded: 5_000 },
    ],
  };
  t.same(applyLegDelivery(trip, 'S-9', input, NOW), { status: 'no-leg' });
  const applied = applyLegDelivery(trip, 'S-1', input, NOW);
  if (applied.status !== 'applied') throw new Error(applied.status);
  t.equal(trip.shipments[0]!.unloadDate, null, 'the trip given is not changed');
  t.equal(applyLegDelivery(applied.trip, 'S-1', input, NOW).status, 'unchanged');
  t.equal(applyLegDelivery(applied.trip, 'S-1', { ...input, ticket: 'T-2' }, NOW).status, 'applied', 'another ticket reference is a correction');
});

t.test('a new import keeps recorded deliveries, not addenda ones, and not when the goods changed', async (t) => {
  const applied = applyLegDelivery(
    trip,
    'S-1',
    {
      offloadDate: AT,
      ticket: 'T-1',
      products: [
        { code: '15101505', offloaded: 19_960 },
        { code: '15101514', offloaded: 9_990 },
        { code: '15101505', offloaded: 5_000 },
      ],
    },
    NOW,
  );
  if (applied.status !== 'applied') throw new Error(applied.status);
  t.same(keepRecordedDeliveries(trip, applied.trip), applied.trip, 'the imported leg in transit takes the recorded delivery');
  t.same(keepRecordedDeliveries(trip, undefined), trip, 'nothing stored yet');
  const addenda = { ...applied.trip, shipments: applied.trip.shipments.map((l) => ({ ...l, delivery: { source: 'addenda' as const, ticket: null } })) };
  t.same(keepRecordedDeliveries(trip, addenda), trip, "the addenda's delivery is the import's to replace");
  const regoods = { ...trip, shipments: trip.shipments.map((l) => ({ ...l, products: [diesel(25_000, null)] })) };
  t.same(keepRecordedDeliveries(regoods, applied.trip), regoods, 'other goods in the new file: the recorded litres no longer fit');
});
