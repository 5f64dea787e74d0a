/** The indexes of `trips` (lib/trips/trips-repo.ts and the trip audits of lib/analytics). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs, RetiredIndexes } from '../db/indexes.ts';

export const TRIP_INDEXES: IndexSpecs = {
  [COLLECTIONS.trips]: [
    { key: { company: 1, createdAt: -1, _id: -1 }, name: 'tenant_created' },
    { key: { company: 1, lastUpdate: 1, _id: 1 }, name: 'tenant_updated' },
    { key: { company: 1, client: 1, createdAt: -1, _id: -1 }, name: 'tenant_client_created' },
    { key: { company: 1, 'shipments.shipment': 1, createdAt: -1, _id: -1 }, name: 'tenant_shipment_created' },
    // Trips with a leg in a given status (?status=), newest first.
    { key: { company: 1, 'shipments.status': 1, createdAt: -1, _id: -1 }, name: 'tenant_leg_status_created' },
    // Trips with a leg dated, loaded or offloaded in a range (lists, audits). The list's order (createdAt, _id)
    // rides along: the range cannot give that order, but the engine ranks a range's candidates from these
    // entries and reads only a page of trips (real MongoDB sorts the fetched trips, as before).
    { key: { company: 1, 'shipments.date': 1, createdAt: -1, _id: -1 }, name: 'tenant_leg_date_created' },
    { key: { company: 1, 'shipments.loadDate': 1, createdAt: -1, _id: -1 }, name: 'tenant_leg_load_created' },
    { key: { company: 1, 'shipments.unloadDate': 1, createdAt: -1, _id: -1 }, name: 'tenant_leg_unload_created' },
    // A month's trips by offload date (lib/trips/offload-months.ts): one equality, then the list's order; the
    // entries give the page and the count, each trip once.
    { key: { company: 1, offloadMonths: 1, createdAt: -1, _id: -1 }, name: 'tenant_offload_month_created' },
    // Audits of one client's deliveries (dispatch-to-bill, shrinkage, unit economics with ?client=).
    { key: { company: 1, client: 1, 'shipments.unloadDate': 1 }, name: 'tenant_client_leg_unload' },
    { key: { company: 1, idFinan: 1 }, name: 'tenant_idfinan' },
    { key: { company: 1, 'vehicle.id': 1, createdAt: -1 }, name: 'tenant_vehicle' },
    // Unit economics of one vehicle, optionally of one client: deliveries in the period.
    { key: { company: 1, 'vehicle.id': 1, client: 1, 'shipments.unloadDate': 1 }, name: 'tenant_vehicle_client_leg_unload' },
    { key: { company: 1, 'driver.id': 1, createdAt: -1 }, name: 'tenant_driver' },
  ],
};

/** Replaced by the *_created indexes above (the list's order added). */
export const RETIRED_TRIP_INDEXES: RetiredIndexes = {
  [COLLECTIONS.trips]: ['tenant_leg_date', 'tenant_leg_load', 'tenant_leg_unload'],
};
