/** The pure placing of costs (lib/analytics/trip-costs.ts): plates named in concepts, fallbacks to the spread, shares by km. */
import t from 'tap';
import { addCostDoc, emptyPools, groupCost, placeCosts, plateIndex, plateVehicle, tripCentsBy, unallocated } from '../../lib/analytics/trip-costs.ts';

t.test('a plate named in a concept', async (t) => {
  const plates = plateIndex([
    { vehicle: 'ECO-1', plate: '65-OS-1Y' },
    { vehicle: 'ECO-2', plate: '12 XY 9Z' },
    { vehicle: 'ECO-3', plate: 'AB-1' }, // 3 characters once compared: too short to tell from a word
    { vehicle: 'ECO-4', plate: 'SH-00-01' },
    { vehicle: 'ECO-5', plate: 'SH0001' }, // the same plate as ECO-4 once compared: neither
  ]);
  t.same([...plates.keys()].sort(), ['12XY9Z', '65OS1Y']);
  t.equal(plateVehicle(['Diesel unidad placas 65-OS-1Y.'], plates), 'ECO-1', 'punctuation around it');
  t.equal(plateVehicle(['diesel placas 65os1y'], plates), 'ECO-1', 'any case, without hyphens');
  t.equal(plateVehicle(['Diesel 65-OS-1Y y 12XY9Z'], plates), null, 'two vehicles named: none');
  t.equal(plateVehicle(['Diesel 65-OS-1Y', 'IEPS 65-OS-1Y'], plates), 'ECO-1', 'the same one twice');
  t.equal(plateVehicle(['Diesel 165-OS-1Y'], plates), null, 'a longer word is not the plate');
  t.equal(plateVehicle(['Diesel AB-1 SH-00-01'], plates), null);
});

t.test('pools, fallbacks and shares (cents)', async (t) => {
  const pools = emptyPools();
  const doc = (over: Partial<Parameters<typeof addCostDoc>[1]>) => ({
    category: 'fuel' as const,
    netC: 100_000,
    assignedVehicle: null,
    assignedTrip: null,
    descriptions: [],
    ...over,
  });
  const plates = plateIndex([{ vehicle: 'V1', plate: '65-OS-1Y' }]);
  addCostDoc(pools, doc({ descriptions: ['placas 65-OS-1Y'] }), plates); // V1 by plate: 1,000.00
  addCostDoc(pools, doc({ assignedVehicle: 'V2', descriptions: ['placas 65-OS-1Y'] }), plates); // the carrier's word wins: V2
  addCostDoc(pools, doc({ assignedVehicle: 'V9', category: 'tyres', netC: 30_000 }), plates); // V9 has no km: spread
  addCostDoc(pools, doc({ assignedTrip: 'T1', category: 'subcontractedFreight', netC: 50_000 }), plates);
  addCostDoc(pools, doc({ assignedTrip: 'T9', category: 'insurance', netC: 10_001 }), plates); // T9 not delivered: spread
  addCostDoc(pools, doc({ category: 'maintenance', netC: 20_000 }), plates);
  const placed = placeCosts(
    pools,
    300,
    new Map([
      ['V1', 100],
      ['V2', 200],
    ]),
    [{ id: 'T1', client: 'C', vehicle: 'V2', driver: 'D', routeKey: 'A→B', km: 200 }],
  );
  t.same(placed.spread, { fuel: 0, tolls: 0, maintenance: 20_000, tyres: 30_000, insurance: 10_001, subcontractedFreight: 0 });
  t.same(placed.documents, { fuel: 2, tolls: 0, maintenance: 1, tyres: 1, insurance: 1, subcontractedFreight: 1 });
  // V2's legs (200 of 300 km) with trip T1: fuel 1,000 (V2 whole), T1's 500, the spread × 2/3.
  const v2 = groupCost(placed, {
    km: 200,
    kmByVehicle: new Map([['V2', 200]]),
    legTollC: 1_500,
    tripC: tripCentsBy(placed, (x) => (x.vehicle === 'V2' ? 'V2' : null)).get('V2'),
  });
  t.same(v2.assigned, { fuel: 100_000, tolls: 1_500, maintenance: 0, tyres: 0, insurance: 0, subcontractedFreight: 50_000 });
  // 20,000 × 2/3 = 13,333.3 → 13,333; 30,000 × 2/3 = 20,000; 10,001 × 2/3 = 6,667.3 → 6,667.
  t.same(v2.spread, { fuel: 0, tolls: 0, maintenance: 13_333, tyres: 20_000, insurance: 6_667, subcontractedFreight: 0 });
  t.equal(v2.totalC, 100_000 + 1_500 + 50_000 + 13_333 + 20_000 + 6_667);
  // Half of V1's km: half its 1,000.00.
  const halfV1 = groupCost(placed, {
    km: 50,
    kmByVehicle: new Map([['V1', 50]]),
    legTollC: 0,
    tripC: tripCentsBy(placed, (x) => (x.vehicle === 'V1' ? 'V1' : null)).get('V1'),
  });
  t.equal(halfV1.assigned.fuel, 50_000);
  t.same(unallocated(placed), { fuel: 0, tolls: 0, maintenance: 0, tyres: 0, insurance: 0, subcontractedFreight: 0 });
  // No km at all: everything is spread and nothing can take it.
  const none = placeCosts(pools, 0, new Map(), []);
  t.same(unallocated(none), { fuel: 200_000, tolls: 0, maintenance: 20_000, tyres: 30_000, insurance: 10_001, subcontractedFreight: 50_000 });
});
