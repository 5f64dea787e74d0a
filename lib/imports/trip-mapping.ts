/**
 * Pure mapping of a CFDI's Carta Porte complement (1.0, 2.0, 3.0, 3.1) into the stored
 * TripDocument shape (lib/model/trip-document.ts, as the demo generator writes
 * it): one trip per stamped CFDI, one leg per Destino.
 *
 * - Products of a leg: the goods assigned to that destination
 *   (CantidadTransporta/IDDestino), or all goods when there is one destination;
 *   its loading date, the origin those goods name (IDOrigen), else the first.
 * - Delivered volumes are not part of Carta Porte: they come from the client's
 *   reception ticket, recorded through the delivery operations (a later import
 *   keeps them, lib/trips/recorded-deliveries.ts), or from this service's
 *   delivery addenda (`urn:freight-backoffice:entregas:1`, docs/importing.md). A leg
 *   without them is in transit: status 2, unloadDate null, offloaded null
 *   (unknown, not 0: lib/trips/delivery-state.ts).
 * - Pricing comes from the CFDI itself when it is the freight invoice (type I),
 *   each line net of its discount: freight lines are paired with legs when there
 *   is one per leg, otherwise apportioned by loaded volume; tolls likewise. A transfer CFDI (type T)
 *   carries no price: pricing is zero and the trip links to no invoice.
 */
import { LEG_STATUS, type LegProduct, type TripDocument, type TripLeg, type TripPlace } from '../model/trip-document.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { mxYmdInt } from '../time/mexico-city.ts';
import { mexicanAddress } from '../model/mexican-address.ts';
import type { CartaPorte, CartaPorteLocation, Cfdi } from './cfdi.ts';
import { conceptKind } from './financial-mapping.ts';
import { financialDocId } from '../finance/ledger/facts.ts';
import { reject, shown } from './rejection.ts';

export const tripId = (tenant: string, uuid: string): string => `${tenant}-CP-${uuid}`;

function place(l: CartaPorteLocation): TripPlace {
  const address = mexicanAddress({ street: l.street, city: l.locality, municipality: l.municipality, state: l.state, country: l.country, zip: l.zip });
  return { id: l.id, nif: l.rfc, name: l.name, address };
}

/** Splits `totalC` over weights in cents, the remainder on the last share. */
function apportion(totalC: number, weights: number[]): number[] {
  const sum = weights.reduce((s, w) => s + w, 0);
  if (sum === 0) return weights.map((_, i) => (i === weights.length - 1 ? totalC : 0));
  let given = 0;
  return weights.map((w, i) => {
    if (i === weights.length - 1) return totalC - given;
    const share = Math.round((totalC * w) / sum);
    given += share;
    return share;
  });
}

function legProducts(cp: CartaPorte, dest: CartaPorteLocation, destinations: number, cfdi: Cfdi): LegProduct[] {
  const products: LegProduct[] = [];
  for (const g of cp.goods) {
    let loaded: number;
    if (g.split.length) {
      const mine = g.split.filter((s) => s.destination === dest.id);
      if (!mine.length) continue;
      loaded = mine.reduce((s, x) => s + x.quantity, 0);
    } else if (destinations === 1) loaded = g.quantity;
    else return reject(`Mercancia ${shown(g.code)} has no CantidadTransporta and there are ${destinations} destinations: which one receives it is unknown`);
    products.push({ desc: g.description, code: g.code, unit: g.unit, loaded, offloaded: 0 });
  }
  if (!products.length) reject(`destination ${shown(dest.id)} receives no goods`);
  // A product the leg carries in several Mercancia (two compartments of diesel) shares the volume delivered of its code:
  // the Entrega rows one by one when there is one per compartment, else their sum by loaded volume — never the whole
  // sum on each, which would count it as often as the leg carries the code.
  for (const code of new Set(products.map((p) => p.code))) {
    const same = products.filter((p) => p.code === code);
    const rows = cfdi.deliveries.filter((d) => d.destination === dest.id && d.code === code).map((d) => d.quantity);
    const total = rows.reduce((s, q) => s + q, 0);
    if (same.length === 1) same[0]!.offloaded = total;
    else if (same.length === rows.length) same.forEach((p, i) => (p.offloaded = rows[i]!));
    else {
      // In millionths of a litre (CantidadDescargada has up to 6 decimals), the remainder on the last compartment.
      const shares = apportion(
        Math.round(total * 1e6),
        same.map((p) => p.loaded),
      );
      same.forEach((p, i) => (p.offloaded = shares[i]! / 1e6));
    }
  }
  return products;
}

/**
 * When a leg's goods were loaded: the earliest departure of the origins its CantidadTransporta name
 * (a trip that loads at two terminals on two days dates each leg at its own); without them, or
 * naming no Origen of the trip, the first origin's.
 */
function legLoadDate(cp: CartaPorte, dest: CartaPorteLocation, origins: readonly CartaPorteLocation[]): number {
  const named = new Set(cp.goods.flatMap((g) => g.split.filter((s) => s.destination === dest.id && s.origin !== undefined).map((s) => s.origin!)));
  const dates = origins.filter((o) => named.has(o.id)).map((o) => o.date);
  return dates.length ? Math.min(...dates) : origins[0]!.date;
}

export function tripFromCfdi(tenant: string, cfdi: Cfdi): TripDocument | null {
  const cp = cfdi.cartaPorte;
  if (!cp) return null;
  const origins = cp.locations.filter((l) => l.kind === 'Origen');
  const dests = cp.locations.filter((l) => l.kind === 'Destino');
  const origin = origins[0]!;
  for (const d of cfdi.deliveries) {
    if (!dests.some((x) => x.id === d.destination)) reject(`delivery addenda names destination ${shown(d.destination)}, which is not a Carta Porte Destino`);
  }
  const shipmentBase = cp.idCcp || cfdi.uuid;
  const productsByLeg = dests.map((d) => legProducts(cp, d, dests.length, cfdi));
  const loadedByLeg = productsByLeg.map((ps) => ps.reduce((s, p) => s + p.loaded, 0));

  const billed = cfdi.type === 'I';
  const freightLines = billed ? cfdi.concepts.filter((c) => conceptKind(c) === 'freight') : [];
  // What is billed: a line's Importe less its Descuento (the discount audit reads the gross and the discount apart).
  const netC = (c: { amount: number; discount: number }): number => toCents(c.amount) - toCents(c.discount);
  const tollC = billed ? cfdi.concepts.filter((c) => conceptKind(c) === 'toll').reduce((s, c) => s + netC(c), 0) : 0;
  const freightByLeg =
    freightLines.length === dests.length
      ? freightLines.map(netC)
      : apportion(
          freightLines.reduce((s, c) => s + netC(c), 0),
          loadedByLeg,
        );
  const tollByLeg = apportion(tollC, loadedByLeg);
  const tariff = freightLines.find((c) => c.unit === 'LTR')?.unitPrice ?? 0;

  const shipments: TripLeg[] = dests.map((d, i) => {
    const products = productsByLeg[i]!;
    const loadedAt = legLoadDate(cp, d, origins);
    const deliveries = cfdi.deliveries.filter((x) => x.destination === d.id);
    const delivered = products.every((p) => deliveries.some((x) => x.code === p.code));
    const unloadDate = delivered ? Math.max(...deliveries.map((x) => x.date)) : null;
    const value = cp.goods.reduce((s, g) => {
      const share = g.split.length
        ? g.split.filter((x) => x.destination === d.id).reduce((a, x) => a + x.quantity, 0) / (g.quantity || 1)
        : dests.length === 1
          ? 1
          : 0;
      return s + toCents(g.value) * share;
    }, 0);
    return {
      id: `${tenant}-${shipmentBase}-${i + 1}`,
      shipment: `${shipmentBase}-${i + 1}`,
      date: mxYmdInt(loadedAt),
      loadDate: loadedAt,
      unloadDate,
      region: d.state,
      status: delivered ? LEG_STATUS.delivered : LEG_STATUS.inTransit,
      distanceKm: d.distanceKm,
      pricing: {
        merchandiseValue: fromCents(Math.round(value)),
        pricingModel: 'volume',
        tarifUnit: tariff,
        toll: fromCents(tollByLeg[i]!),
        billedFreight: fromCents(freightByLeg[i]!),
        totalFreight: fromCents(freightByLeg[i]! + tollByLeg[i]!),
      },
      products: delivered ? products : products.map((p) => ({ ...p, offloaded: null })),
      ...(delivered ? { delivery: { source: 'addenda' as const, ticket: null } } : {}),
    };
  });

  const driver = cp.driver ?? reject('Carta Porte has no operator (FiguraTransporte TipoFigura 01)');
  return {
    _id: tripId(tenant, cfdi.uuid),
    idFinan: billed ? financialDocId(tenant, cfdi.uuid) : null,
    nCed: cp.idCcp,
    nRel: cfdi.serie && cfdi.folio ? `${cfdi.serie}-${cfdi.folio}` : cfdi.folio,
    company: tenant,
    // A transfer's client is its last consignee; Carta Porte 1.0 may leave its RFC out: then the receiver's.
    client: billed ? cfdi.receiver.rfc : dests[dests.length - 1]!.rfc || cfdi.receiver.rfc,
    createdAt: cfdi.date,
    driver: { id: driver.rfc, name: driver.name, license: driver.license },
    vehicle: { id: cp.vehicle.plate, plate: cp.vehicle.plate, config: cp.vehicle.config, trailers: cp.vehicle.trailers },
    origin: place(origin),
    destination: place(dests[dests.length - 1]!),
    shipments,
  };
}
