import type { FinancialDocument } from '../model/financial-document.ts';
import type { TenantSettings } from '../model/tenant-settings.ts';
import type { TripDocument } from '../model/trip-document.ts';
import { documentBalance } from '../finance/balance.ts';
import { legTolerancePct, legVolumes } from './shrinkage.ts';

/** The summary form of a trip (interface section 2.4). */
export interface FinancialLink {
  id: string;
  status: { code: number; label: string };
  total: number;
  pending: number;
  invoiceFolio: string;
  invoiceUuid: string;
  pdf: string;
  xml: string;
}

export interface TripSummary {
  id: string;
  /** Currency of the leg pricing and the linked document's amounts. */
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
    pricing: TripDocument['shipments'][number]['pricing'];
    volumes: ReturnType<typeof legVolumes> & {
      tolerancePercent: number;
      products: { desc: string; code: string; loaded: number; offloaded: number }[];
    };
  }[];
  financialLinked: FinancialLink | null;
}

export interface TripSummaryContext {
  settings: Pick<TenantSettings, 'shrinkageTolerancePct' | 'toleranceRules' | 'currency'>;
  statusLabel: (code: number) => string;
  fileUrl: (key: string) => string;
}

const iso = (ms: number | null): string | null => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

export function financialLink(doc: FinancialDocument, ctx: Pick<TripSummaryContext, 'statusLabel' | 'fileUrl'>): FinancialLink {
  return {
    id: doc.id,
    status: { code: doc.status, label: ctx.statusLabel(doc.status) },
    total: doc.iTot,
    pending: documentBalance(doc).pending,
    invoiceFolio: doc.invoice.num,
    invoiceUuid: doc.invoice.uuid,
    pdf: ctx.fileUrl(doc.invoice.pdf),
    xml: ctx.fileUrl(doc.invoice.xml),
  };
}

export function tripSummary(trip: TripDocument, linked: FinancialDocument | null, ctx: TripSummaryContext): TripSummary {
  return {
    id: trip._id,
    currency: linked?.currency ?? ctx.settings.currency ?? 'MXN',
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
      return {
        shipmentId: leg.shipment,
        date: leg.date,
        loadDate: iso(leg.loadDate),
        offloadDate: iso(leg.unloadDate),
        region: leg.region,
        vehicle: trip.vehicle.id,
        status: leg.status,
        distanceKm: leg.distanceKm,
        pricing: {
          merchandiseValue: leg.pricing.merchandiseValue,
          pricingModel: leg.pricing.pricingModel,
          tarifUnit: leg.pricing.tarifUnit,
          toll: leg.pricing.toll,
          billedFreight: leg.pricing.billedFreight,
          totalFreight: leg.pricing.totalFreight,
        },
        volumes: {
          ...legVolumes(leg, tolerancePercent),
          tolerancePercent,
          products: leg.products.map((p) => ({ desc: p.desc, code: p.code, loaded: p.loaded, offloaded: p.offloaded })),
        },
      };
    }),
    financialLinked: linked ? financialLink(linked, ctx) : null,
  };
}
