/**
 * Hand-made trips for unit economics' pure tests (test/unit/unit-economics-*.test.ts): one
 * grouping combo that a test varies field by field, and the instants its legs and costs fall on.
 */
import type { UnitCombo, UnitLeg, UnitTrip } from '../../lib/analytics/unit-economics-day.ts';

/** The fields a trip is grouped by, with `over` replacing some of them. */
export const combo = (over: Partial<UnitCombo>): UnitCombo => ({
  client: 'CIN010203KL5',
  vehicle: 'VEH-1',
  plate: 'XA1234B',
  config: 'T3S2',
  driver: 'HEGR751212AB3',
  driverName: 'RAUL HERNANDEZ GARCIA',
  originId: 'OR000001',
  originName: 'TERMINAL',
  originCity: 'Veracruz',
  originState: 'VER',
  destinationId: 'DE000001',
  destinationName: 'ESTACION 1',
  destinationCity: 'Xalapa',
  destinationState: 'VER',
  ...over,
});

/** A trip of `combo(over)` delivered in `legs`. */
export const trip = (over: Partial<UnitCombo>, legs: UnitLeg[]): UnitTrip => ({ ...combo(over), legs });

/** Noon in Mexico City (UTC−6) of a day of 2026 (month 3: March), as epoch ms. */
export const noon2026 = (month: number, day: number): number => Date.UTC(2026, month - 1, day, 18);
