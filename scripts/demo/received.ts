/**
 * The CFDIs the demo carrier received over the last six months of the window (docs/domain.md,
 * "Received CFDIs" and "Costs and margin"), so the unit-economics costs, margins and the
 * creditable VAT are not empty: per active truck and month two diesel invoices naming its plate,
 * now and then a service or tyres naming it too; per month one toll statement and one insurance
 * premium (spread by km), and one subcontracted freight invoice for a delivered trip, assigned
 * to it. All PUE in MXN with VAT 16% (the subcontracted freight also with the 4% retention).
 * A few hundred documents per tenant at the default sizes. Drawn from its own PRNG sub-stream, so
 * the trips and financial documents are exactly as before; stored as the import would store them
 * (lib/received/received-document.ts).
 */
import type { ReceivedDocRow, ReceivedInvoiceFact } from '../../lib/received/received-rows.ts';
import type { ReceivedAssignmentRow } from '../../lib/received/received-assignments-repo.ts';
import { buildReceivedDocument } from '../../lib/received/received-document.ts';
import { fromCents, toCents } from '../../lib/money/cents.ts';
import { DAY } from './numbers.ts';
import type { Plan } from './plan.ts';
import { buildTrip } from './trips.ts';
import { streamRng, STREAM, type World } from './world.ts';
import type { Rng } from './random.ts';

const MONTHS = 6;
const MONTH = 30 * DAY;
const SUPPLIERS = {
  fuel: { rfc: 'GDG010101AB1', name: 'GASOLINERA DEL GOLFO SA DE CV' },
  maintenance: { rfc: 'TDI020202BC2', name: 'TALLER DIESEL INDUSTRIAL SA DE CV' },
  tyres: { rfc: 'LRN030303CD3', name: 'LLANTAS Y RINES DEL NORTE SA DE CV' },
  tolls: { rfc: 'PEA040404DE4', name: 'PEAJES ELECTRONICOS SA DE CV' },
  insurance: { rfc: 'SFL050505EF5', name: 'SEGUROS DE FLOTILLAS SA DE CV' },
  freight: { rfc: 'TSU060606FG6', name: 'TRANSPORTES DEL SURESTE SA DE CV' },
} as const;

interface Draft {
  supplier: { rfc: string; name: string };
  date: number;
  code: string;
  description: string;
  amountC: number;
  retain: boolean;
}

export interface ReceivedData {
  docs: ReceivedDocRow[];
  assignments: ReceivedAssignmentRow[];
}

const between = (rng: Rng, from: number, to: number): number => Math.floor(rng.float(from, to));
const pesos = (rng: Rng, min: number, max: number): number => toCents(Math.round(rng.float(min, max) * 100) / 100);

/** Every received document of the tenant (deterministic; in date order, then UUID). */
export function buildReceived(world: World, plan: Plan): ReceivedData {
  const drafts: Draft[] = [];
  const end = world.end;
  const base = end - MONTHS * MONTH;
  for (let m = 0; m < MONTHS; m++) {
    const from = base + m * MONTH;
    const to = Math.min(end, from + MONTH);
    const rng = streamRng(world, STREAM.received, m);
    for (const v of world.vehicles) {
      if (v.activeFrom > to || v.activeTo < from) continue;
      for (let i = 0; i < 2; i++)
        drafts.push({
          supplier: SUPPLIERS.fuel,
          date: between(rng, from, to),
          code: '15101505',
          description: `Diesel unidad ${v.id} placas ${v.plate}`,
          amountC: pesos(rng, 35_000, 90_000),
          retain: false,
        });
      if (rng.next() < 0.3)
        drafts.push({
          supplier: SUPPLIERS.maintenance,
          date: between(rng, from, to),
          code: '78181500',
          description: `Servicio preventivo unidad placas ${v.plate}`,
          amountC: pesos(rng, 4_000, 25_000),
          retain: false,
        });
      if (rng.next() < 0.1)
        drafts.push({
          supplier: SUPPLIERS.tyres,
          date: between(rng, from, to),
          code: '25172504',
          description: `Llantas 295/80R22.5 placas ${v.plate}`,
          amountC: pesos(rng, 18_000, 45_000),
          retain: false,
        });
    }
    drafts.push({
      supplier: SUPPLIERS.tolls,
      date: between(rng, from, to),
      code: '95111603',
      description: 'Peajes TAG del mes',
      amountC: pesos(rng, 15_000, 40_000),
      retain: false,
    });
    drafts.push({
      supplier: SUPPLIERS.insurance,
      date: between(rng, from, to),
      code: '84131503',
      description: 'Prima mensual seguro de flotilla',
      amountC: pesos(rng, 25_000, 35_000),
      retain: false,
    });
  }
  // One subcontracted trip: the latest trip whose every leg is delivered, billed by another carrier a day after.
  const assignments: ReceivedAssignmentRow[] = [];
  let sub: Draft | null = null;
  let subTrip = '';
  for (let k = world.tripCount - 1; k >= Math.max(0, world.tripCount - 200) && !sub; k--) {
    const trip = buildTrip(world, plan, k);
    const unloads = trip.shipments.map((l) => l.unloadDate);
    if (!unloads.length || unloads.some((u) => u === null)) continue;
    const last = Math.max(...(unloads as number[]));
    const km = trip.shipments.reduce((s, l) => s + l.distanceKm, 0);
    subTrip = trip._id;
    sub = {
      supplier: SUPPLIERS.freight,
      date: Math.min(end, last + DAY),
      code: '78101802',
      description: `Flete subcontratado viaje ${trip._id}`,
      amountC: toCents(Math.max(5_000, Math.round(km * 38))),
      retain: true,
    };
  }
  if (sub) drafts.push(sub);

  const rng = streamRng(world, STREAM.received, MONTHS);
  const lastUpdate = new Date(end).toISOString();
  const docs = drafts.map((d, i) => {
    const amount = fromCents(d.amountC);
    const vatC = Math.round(d.amountC * 0.16);
    const retC = d.retain ? Math.round(d.amountC * 0.04) : 0;
    const fact: ReceivedInvoiceFact = {
      kind: 'invoice',
      uuid: rng.uuid(),
      certifiedAt: d.date,
      supplier: { ...d.supplier },
      serie: 'R',
      folio: String(i + 1),
      date: d.date,
      currency: 'MXN',
      exchangeRate: 1,
      paymentMethod: 'PUE',
      subTotal: amount,
      discount: 0,
      total: fromCents(d.amountC + vatC - retC),
      concepts: [
        {
          code: d.code,
          description: d.description,
          quantity: 1,
          unit: 'E48',
          unitPrice: amount,
          amount,
          discount: 0,
          transfers: [{ tax: 'IVA', factor: 'Tasa', rate: 0.16, base: amount, amount: fromCents(vatC) }],
          retentions: d.retain ? [{ tax: 'IVA', factor: 'Tasa', rate: 0.04, base: amount, amount: fromCents(retC) }] : [],
        },
      ],
    };
    const doc = { ...buildReceivedDocument(world.tenant, fact, [], [], new Map(), world.settings.receivedCategoryRules), lastUpdate };
    if (d === sub) assignments.push({ _id: doc._id, tenant: world.tenant, vehicle: null, tripId: subTrip, assignedAt: lastUpdate });
    return doc;
  });
  docs.sort((a, b) => a.date - b.date || (a.uuid < b.uuid ? -1 : 1));
  return { docs, assignments };
}
