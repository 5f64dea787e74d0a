/**
 * The freight unit economics (GET /api/analytics/unit-economics) as tables: one row per client,
 * vehicle, driver and route (the first `limit` of each), the totals and the costs per category.
 */
import { getFreightUnitEconomics } from '../../analytics/get-freight-unit-economics.ts';
import { reportDataset } from './report-dataset.ts';
import { col } from './tabulate.ts';
import { quotient } from './quotient.ts';

/** Volume, revenue, cost and margin of a group of legs. */
const UNIT = [
  col('trips', 'Trips'),
  col('legs', 'Legs'),
  col('revenue', 'Σ leg billed freight (MXN before VAT, tolls excluded)'),
  col('km', 'Kilometres'),
  col('litres', 'Litres on the chosen basis'),
  col('loadedLitres', 'Litres loaded'),
  col('offloadedLitres', 'Litres offloaded'),
  ...quotient('revenuePerKm', 'Revenue per km'),
  ...quotient('revenuePerLitre', 'Revenue per litre'),
  col('cost', 'Costs placed on the legs (MXN before VAT)'),
  ...quotient('costPerKm', 'Cost per km'),
  ...quotient('costPerLitre', 'Cost per litre'),
  ...quotient('costPerTrip', 'Cost per trip'),
  col('margin', 'Revenue + tolls recharged − cost'),
  ...quotient('marginPerKm', 'Margin per km'),
];

const place = (end: 'origin' | 'destination') => [
  col(`${end}.id`, `Carta Porte location id of the ${end}`),
  col(`${end}.name`, `Name of the ${end}`),
  col(`${end}.city`, `City of the ${end}`),
  col(`${end}.state`, `SAT state key of the ${end}`),
];

export const UNIT_ECONOMICS_DATASET = reportDataset({
  name: 'unit-economics',
  operationId: 'getFreightUnitEconomics',
  run: (ctx, tenant, query) => getFreightUnitEconomics(ctx, tenant, query, { everyClient: true }),
  tables: [
    { name: 'byClient.data', columns: [col('client', 'Client RFC'), ...UNIT] },
    { name: 'byVehicle.data', columns: [col('vehicle', 'Vehicle id'), col('plate', 'Plate'), col('config', 'SAT vehicle configuration'), ...UNIT] },
    { name: 'byDriver.data', columns: [col('driver', 'Driver id'), col('name', "The driver's name"), ...UNIT] },
    {
      name: 'routes.data',
      columns: [
        col('routeKey', 'Route key (origin → destination)'),
        ...place('origin'),
        ...place('destination'),
        col('distanceKm', 'Mean distance of a leg on the route'),
        ...UNIT,
      ],
    },
    {
      name: 'totals',
      columns: [
        col('period.startDate', 'First day of the period'),
        col('period.endDate', 'Last day of the period'),
        col('period.requestedEndDate', "The endDate asked for when the range was longer than the report's 366 days (it covers the first 366); empty otherwise"),
        ...UNIT,
      ],
    },
    {
      name: 'costs.categories',
      columns: [
        col('category', 'Cost category'),
        col('amount', 'Cost of the category on the legs'),
        col('assigned', 'Assigned to a trip or vehicle'),
        col('spread', 'Spread over the legs by km'),
        col('documents', "The tenant's received CFDIs of the category counted in the period"),
        col('unallocated', 'Spread costs no leg could take'),
      ],
    },
  ],
});
