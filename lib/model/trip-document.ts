/**
 * A trip as stored in the `trips` collection (section 2.5 of the interface):
 * one dispatch of a driver and vehicle with one or more legs, cross-linked to
 * its financial document through `idFinan`.
 */

import type { MexicanAddress } from './mexican-address.ts';

export type { MexicanAddress };

export interface TripPlace {
  /** Carta Porte location id: OR000001 (origin), DE000001 (destination). */
  id: string;
  /** RFC of the shipper/receiver at this place. */
  nif: string;
  name: string;
  address: MexicanAddress;
}

export interface LegProduct {
  desc: string;
  /** SAT product key: diesel 15101505, gasoline 15101514/15101515. */
  code: string;
  unit: string;
  loaded: number;
  /** Litres the client's reception ticket states; null until the leg is delivered (in transit). */
  offloaded: number | null;
}

export interface LegPricing {
  merchandiseValue: number;
  pricingModel: 'volume';
  /** Freight tariff per litre. */
  tarifUnit: number;
  toll: number;
  billedFreight: number;
  totalFreight: number;
}

/** Leg status codes the service writes (a tenant's settings.statusLabels names them). */
export const LEG_STATUS = { inTransit: 2, delivered: 4 } as const;

/**
 * Where a leg's delivered volumes came from: `recorded` through the API
 * (PUT …/delivery or POST /api/deliveries), which a later import of the same
 * Carta Porte keeps; `addenda` from the CFDI's delivery addenda, which the
 * import owns.
 */
export interface LegDelivery {
  source: 'recorded' | 'addenda';
  /** Reference of the client's reception ticket, when given. */
  ticket: string | null;
}

export interface TripLeg {
  id: string;
  /** Shipment id (shipmentId in the summary form). */
  shipment: string;
  /** Compact date YYYYMMDD (Mexico City). */
  date: number;
  /**
   * Loading and offloading instants, epoch ms; null until they happen. The leg
   * is delivered once `unloadDate` and every product's `offloaded` are known
   * (lib/trips/delivery-state.ts); until then it is in transit.
   */
  loadDate: number | null;
  unloadDate: number | null;
  region: string;
  status: number;
  distanceKm: number;
  pricing: LegPricing;
  products: LegProduct[];
  /** How the delivery was recorded; absent on legs in transit and on records older than it. */
  delivery?: LegDelivery | null;
}

export interface Vehicle {
  id: string;
  plate: string;
  /** SAT vehicle configuration, e.g. T3S2. */
  config: string;
  trailers: string[];
}

export interface Driver {
  id: string;
  name: string;
  license: string;
}

export interface TripDocument {
  _id: string;
  /** Linked financial document id. */
  idFinan: string | null;
  nCed: string;
  nRel: string;
  company: string;
  client: string;
  /** Trip creation instant, epoch ms. */
  createdAt: number;
  /** Last change of the record, ISO 8601 UTC (what `updatedSince` filters on); older records may lack it. */
  lastUpdate?: string;
  driver: Driver;
  vehicle: Vehicle;
  origin: TripPlace;
  destination: TripPlace;
  shipments: TripLeg[];
}

/**
 * A trip as the `trips` collection holds it. Every writer builds it with `withOffloadMonths()`
 * (lib/trips/offload-months.ts); trips written before the field existed get it from the start-up
 * backfill (lib/trips/offload-months-backfill.ts). Repositories project it out of whatever they
 * return to clients.
 */
export interface StoredTripDocument extends TripDocument {
  /** The Mexico City months ('YYYY-MM') its legs were offloaded in, ascending (index `tenant_offload_month_created`). */
  offloadMonths: string[];
}

/** The projection that leaves a stored trip's derived fields out of what a read hands back. */
export const TRIP_DERIVED_FIELDS_OUT = { offloadMonths: 0 } as const satisfies Record<Exclude<keyof StoredTripDocument, keyof TripDocument>, 0>;
