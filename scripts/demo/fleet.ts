/**
 * The carrier's fleet: tank trucks sized to the trip volume (a few retired
 * before the end of the window, a few joining late) and their drivers (one
 * primary driver per vehicle plus relief drivers).
 */
import { FIRST_NAMES, SURNAMES, VEHICLE_CONFIGS, type VehicleConfigDef } from './catalog.ts';
import { DAY, pad } from './numbers.ts';
import { WeightedTable, type Rng } from './random.ts';

export interface VehicleInfo {
  id: string;
  plate: string;
  cfg: VehicleConfigDef;
  capacity: number;
  trailers: readonly string[];
  activeFrom: number;
  activeTo: number;
  primaryDriver: number;
}

export interface DriverInfo {
  id: string;
  name: string;
  license: string;
}

export interface Fleet {
  vehicles: VehicleInfo[];
  /** Vehicles weighted by how much each one is used. */
  vehicleTable: WeightedTable<VehicleInfo>;
  drivers: DriverInfo[];
}

/** A fleet for `trips` trips between start and end (drivers drawn first, then vehicles, then their usage weights). */
export function drawFleet(rng: Rng, trips: number, start: number, end: number): Fleet {
  const days = Math.max(1, (end - start) / DAY);
  const fleetSize = Math.max(6, Math.min(5_000, Math.ceil((trips / days) * 1.7)));
  const drivers = drawDrivers(rng, fleetSize + Math.max(2, Math.ceil(fleetSize * 0.2)));
  const vehicles = drawVehicles(rng, fleetSize, start, end);
  const vehicleTable = new WeightedTable(
    vehicles,
    vehicles.map(() => rng.float(0.6, 1.4)),
  );
  return { vehicles, vehicleTable, drivers };
}

function drawDrivers(rng: Rng, count: number): DriverInfo[] {
  const drivers: DriverInfo[] = [];
  const names = new Set<string>();
  for (let i = 0; i < count; i++) {
    let name = '';
    do name = `${rng.pick(FIRST_NAMES)} ${rng.pick(SURNAMES)} ${rng.pick(SURNAMES)}`;
    while (names.has(name) && names.size < 100_000);
    names.add(name);
    drivers.push({ id: `OP-${pad(i + 1, 4)}`, name, license: `E${rng.digits(8)}` });
  }
  return drivers;
}

function drawVehicles(rng: Rng, fleetSize: number, start: number, end: number): VehicleInfo[] {
  const configTable = new WeightedTable(
    VEHICLE_CONFIGS,
    VEHICLE_CONFIGS.map((c) => c.weight),
  );
  const plates = new Set<string>();
  const uniquePlate = (make: () => string): string => {
    for (;;) {
      const p = make();
      if (!plates.has(p)) {
        plates.add(p);
        return p;
      }
    }
  };
  const retired = Math.max(1, Math.round(fleetSize * 0.06));
  const lateJoiners = Math.round(fleetSize * 0.08);
  const vehicles: VehicleInfo[] = [];
  for (let i = 0; i < fleetSize; i++) {
    const cfg = configTable.pick(rng);
    const capacity = Math.round(rng.float(cfg.capacity[0], cfg.capacity[1]) / 500) * 500;
    const plate = uniquePlate(() => `${rng.digits(2)}-${rng.letters(2)}-${rng.digits(1)}${rng.letters(1)}`);
    const trailers: string[] = [];
    for (let t = 0; t < cfg.trailers; t++) trailers.push(uniquePlate(() => `${rng.digits(1)}-U${rng.letters(1)}-${rng.digits(3)}`));
    let activeFrom = start - 365 * DAY;
    let activeTo = end + DAY;
    if (i >= fleetSize - retired) activeTo = end - rng.int(25, 90) * DAY;
    else if (i >= fleetSize - retired - lateJoiners) activeFrom = start + rng.int(30, 180) * DAY;
    vehicles.push({ id: `ECO-${pad(101 + i, 3)}`, plate, cfg, capacity, trailers, activeFrom, activeTo, primaryDriver: i });
  }
  return vehicles;
}

/** A vehicle in service at t, by usage weight (the first in service if 40 draws miss). */
export function pickVehicle(fleet: Fleet, rng: Rng, t: number): VehicleInfo {
  for (let i = 0; i < 40; i++) {
    const v = fleet.vehicleTable.pick(rng);
    if (v.activeFrom <= t && t <= v.activeTo) return v;
  }
  return fleet.vehicles.find((v) => v.activeFrom <= t && t <= v.activeTo) ?? fleet.vehicles[0]!;
}
