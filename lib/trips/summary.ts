import type { FinancialDocument } from '../model/financial-document.ts';
import type { TenantSettings } from '../model/tenant-settings.ts';
import type { TripDocument } from '../model/trip-document.ts';
import { documentBalance } from '../finance/balance.ts';
import { MXN, rateOf, toMxn } from '../money/currency.ts';
import { isDelivered } from './delivery-state.ts';
import { legLoaded, legTolerancePct, legVolumes, shownPct, type LegVolumes } from './shrinkage.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';

/** The volumes of a leg in transit: loaded litres only; no shrinkage yet, never flagged. */
export interface PendingVolumes {
  loaded: number;
  offloaded: null;
  shrinkageVolume: null;
  shrinkagePercent: null;
  exceedsTolerance: false;
}

/** The summary form of a trip (interface section 2.4). */
export interface FinancialLink {
  id: string;
  status: { code: number; label: string };
  total: number;
  pending: number;
  invoiceFolio: string;
  invoiceUuid: string;
  /** The printed form rendered from the kept original, or null when none is kept. */
  pdf: string | null;
  /** The kept original XML's download, or null when none is kept. */
  xml: string | null;
}

export interface TripSummary {
  id: string;
  /** Currency of every amount of the record: MXN (leg pricing converted at import, the linked document's amounts at its rate). */
  currency: string;
  lastUpdate: string | null;
  client: string;
  company: string;
  driver: string;
  references: { nCed: string; nRel: string; idFinan: string | null };
  route: {
    origin: { id: string; city: string; state: string };
    destination: { id: string; city: string; state: string };
  };
  shipments: {
    shipmentId: string;
    date: number;
    loadDate: string | null;
    offloadDate: string | null;
    region: string;
    vehicle: string;
    status: number;
    distanceKm: number;
    /** Offloaded volumes known (lib/trips/delivery-state.ts); false while in transit. */
    delivered: boolean;
    deliveryTicket: string | null;
    pricing: TripDocument['shipments'][number]['pricing'];
    volumes: (LegVolumes | PendingVolumes) & {
      tolerancePercent: number;
      products: { desc: string; code: string; loaded: number; offloaded: number | null }[];
    };
  }[];
  financialLinked: FinancialLink | null;
}

export interface TripSummaryContext {
  settings: Pick<TenantSettings, 'shrinkageTolerancePct' | 'toleranceRules'>;
  statusLabel: (code: number) => string;
  /** The link to a document's kept original (lib/originals/original-url.ts), or null. */
  originalUrl: (uuid: string, key: string | null | undefined) => string | null;
  /** The link to its printed form (null exactly when `originalUrl` is). */
  printedFormUrl: (uuid: string, key: string | null | undefined) => string | null;
}

const iso = (ms: number | null): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

export function financialLink(doc: FinancialDocument, ctx: Pick<TripSummaryContext, 'statusLabel' | 'originalUrl' | 'printedFormUrl'>): FinancialLink {
  return {
    id: doc.id,
    status: { code: doc.status, label: ctx.statusLabel(doc.status) },
    // In MXN, as every amount of the trip's record (its `currency`): at the document's rate.
    total: toMxn(doc.iTot, rateOf(doc)),
    pending: toMxn(documentBalance(doc).pending, rateOf(doc)),
    invoiceFolio: doc.invoice.num,
    invoiceUuid: doc.invoice.uuid,
    pdf: ctx.printedFormUrl(doc.invoice.uuid, doc.invoice.xml),
    xml: ctx.originalUrl(doc.invoice.uuid, doc.invoice.xml),
  };
}

export function tripSummary(trip: TripDocument, linked: FinancialDocument | null, ctx: TripSummaryContext): TripSummary {
  return {
    id: trip._id,
    // Trip pricing is MXN whatever its invoice's currency: the import converts it (lib/imports/cfdi-currency.ts).
    currency: MXN,
    lastUpdate: trip.lastUpdate ?? null,
    client: trip.client,
    company: trip.company,
    driver: trip.driver.name,
    references: { nCed: trip.nCed, nRel: trip.nRel, idFinan: trip.idFinan },
    route: {
      origin: { id: trip.origin.id, city: trip.origin.address.city, state: trip.origin.address.state },
      destination: { id: trip.destination.id, city: trip.destination.address.city, state: trip.destination.address.state },
    },
    shipments: trip.shipments.map((leg) => {
      const tolerancePercent = legTolerancePct(leg, ctx.settings, trip.client);
      const delivered = isDelivered(leg);
      const volumes: LegVolumes | PendingVolumes = delivered
        ? legVolumes(leg, tolerancePercent)
        : { loaded: legLoaded(leg), offloaded: null, shrinkageVolume: null, shrinkagePercent: null, exceedsTolerance: false };
      return {
        shipmentId: leg.shipment,
        date: leg.date,
        loadDate: iso(leg.loadDate),
        offloadDate: iso(leg.unloadDate),
        region: leg.region,
        vehicle: trip.vehicle.id,
        status: leg.status,
        distanceKm: leg.distanceKm,
        delivered,
        deliveryTicket: delivered ? (leg.delivery?.ticket ?? null) : null,
        pricing: {
          merchandiseValue: leg.pricing.merchandiseValue,
          pricingModel: leg.pricing.pricingModel,
          tarifUnit: leg.pricing.tarifUnit,
          toll: leg.pricing.toll,
          billedFreight: leg.pricing.billedFreight,
          totalFreight: leg.pricing.totalFreight,
        },
        volumes: {
          ...volumes,
          tolerancePercent: shownPct(tolerancePercent),
          // In transit, nothing is offloaded yet: null, whatever an older record stored.
          products: leg.products.map((p) => ({ desc: p.desc, code: p.code, loaded: p.loaded, offloaded: delivered ? p.offloaded : null })),
        },
      };
    }),
    financialLinked: linked ? financialLink(linked, ctx) : null,
  };
}

// Checked against the spec: a field renamed on one side only fails type-checking here.
export type TripSummaryChecks = [Conforms<TripSummary, components['schemas']['TripSummary']>, Conforms<FinancialLink, components['schemas']['FinancialLink']>];
