/**
 * Ids and reference numbers of the demo records. Ids are globally unique:
 * `<P>-FD-000001` (documents), `<P>-VJ-000001` (trips), shipments
 * `EM-000001-1` (ghosts `EM-H…`), where <P> is the tenant's id prefix.
 */
import { isoWeekMonday, mxDateString } from '../../lib/time/mexico-city.ts';
import { pad } from './numbers.ts';
import { STREAM, streamRng, type World } from './world.ts';
import type { TripSketch } from './trip-sketch.ts';

/** The letters the RFC starts with ('TGO850101AB1' → 'TGO'), the default id prefix. */
export function defaultIdPrefix(tenant: string): string {
  const letters = (/^[A-ZÑ&]+/i.exec(tenant)?.[0] ?? tenant).toUpperCase().replace(/[^A-Z]/g, 'X');
  return letters || 'T';
}

export const docNo = (j: number): string => pad(j + 1, 6);
export const docId = (world: World, j: number): string => `${world.prefix}-FD-${docNo(j)}`;
export const tripId = (world: World, k: number): string => `${world.prefix}-VJ-${pad(k + 1, 6)}`;
/** Invoice UUID of document j: its own stream, so a replacement can name its original's before building it. */
export const uuidOf = (world: World, j: number): string => streamRng(world, STREAM.uuid, j).uuid();
export const nCedOf = (sk: TripSketch): string => (sk.ghost ? `CED-H${pad(sk.no, 6)}` : `CED-${pad(sk.no, 6)}`);
/** Weekly relation number: REL-<Monday of the dispatch week, YYMMDD>-<client no>. */
export const nRelOf = (sk: TripSketch): string => `REL-${yymmdd(isoWeekMonday(mxDateString(sk.createdAt)))}-${pad(sk.client.no, 2)}`;
export const shipmentNo = (sk: TripSketch, leg: number): string => `EM-${sk.ghost ? 'H' : ''}${pad(sk.no, 6)}-${leg + 1}`;
/** The client's reception ticket of a delivered leg (its number follows the shipment's). */
export const receptionTicket = (sk: TripSketch, leg: number): string => `REC-${pad(sk.no, 6)}-${leg + 1}`;

const yymmdd = (date: string): string => `${date.slice(2, 4)}${date.slice(5, 7)}${date.slice(8, 10)}`;
