/** The fleet utilization audit (GET /api/analytics/fleet-utilization) as tables: one row per vehicle or driver, the totals, the idle vehicles. */
import { auditFleetUtilization } from '../../analytics/audit-fleet-utilization.ts';
import { reportDataset } from './report-dataset.ts';
import { col } from './tabulate.ts';
import { quotient } from './quotient.ts';

export const FLEET_UTILIZATION_DATASET = reportDataset({
  name: 'fleet-utilization',
  operationId: 'auditFleetUtilization',
  run: auditFleetUtilization,
  tables: [
    {
      name: 'rows',
      columns: [
        col('groupBy', 'vehicle or driver: what a row is'),
        col('key', 'Vehicle id or driver id'),
        col('label', 'Plate or driver name'),
        col('trips', 'Trips'),
        col('legs', 'Legs'),
        col('legsInTransit', 'Legs counted that are not delivered yet'),
        col('activeDays', 'Days with activity'),
        col('daysInPeriod', 'Days in the period'),
        ...quotient('utilization', 'Active days ÷ days in the period'),
        col('litres', 'Σ litres of the legs on litresBasis'),
        col('litresBasis', 'loaded or offloaded litres'),
        col('km', 'Kilometres'),
        col('revenue', 'Revenue (MXN)'),
        ...quotient('revenuePerKm', 'Revenue per km'),
      ],
    },
    {
      name: 'totals',
      columns: [
        col('period.startDate', 'First day of the period'),
        col('period.endDate', 'Last day of the period'),
        col('period.requestedEndDate', "The endDate asked for when the range was longer than the report's 366 days (it covers the first 366); empty otherwise"),
        col('groupBy', 'vehicle or driver: what a unit is'),
        col('units', 'Vehicles (or drivers) with activity in the period'),
        col('trips', 'Trips'),
        col('legs', 'Legs'),
        col('legsInTransit', 'Legs counted that are not delivered yet'),
        col('activeUnitDays', 'Σ active days of the units'),
        col('unitDaysInPeriod', 'Units × days in the period'),
        ...quotient('utilization', 'Active unit days ÷ unit days in the period'),
        col('litres', 'Litres'),
        col('km', 'Kilometres'),
        col('revenue', 'Revenue (MXN)'),
        ...quotient('revenuePerKm', 'Revenue per km'),
      ],
    },
    {
      name: 'idleVehicles.data',
      columns: [
        col('vehicle', 'Vehicle id'),
        col('plate', 'Plate'),
        col('lastActivity', 'Last activity instant'),
        col('daysSinceLastActivity', 'Days since the last activity'),
      ],
    },
  ],
});
