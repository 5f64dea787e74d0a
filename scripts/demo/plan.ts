/**
 * The plan: which trips are billed, which documents exist and in which order,
 * decided in one cheap pass over the trip sketches (typed arrays, a few bytes
 * per record) so that trips and documents can then be built one at a time.
 *
 * A billed trip gets one invoice, 0–10 days after its last offload mostly
 * (~3% at dispatch, before the load); ~0.5% of trips point to a legacy id that
 * does not exist; some delivered trips are never billed. ~2.2% of invoices are
 * cancelled and replaced (motive 01 or 02: two documents). When the trips need
 * more documents than asked for, a random subset stays unbilled; when they
 * need fewer, "ghost" documents bill trips outside the collection, ~0.8% of
 * all documents being ghosts cancelled with motive 03.
 */
import { mxDayStartAt } from '../../lib/time/mexico-city.ts';
import { DAY, HOUR, MIN } from './numbers.ts';
import type { Rng } from './random.ts';
import { ghostSketch, tripSketch, type TripSketch } from './trip-sketch.ts';
import { STREAM, streamRng, type World } from './world.ts';

/** What a document is to its trip. */
export const ROLE = {
  normal: 0,
  cancelled01: 1,
  cancelled02: 2,
  replacement: 3,
  ghost: 4,
  ghostCancelled03: 5,
} as const;

/** tripDoc values that are not a document index. */
export const NO_DOC = -1;
export const BROKEN_LINK = -2;

export interface Plan {
  docCount: number;
  /** ≥ 0: trip index; < 0: ghost −(g + 1). */
  docSource: Int32Array;
  docRole: Uint8Array;
  docDate: Float64Array;
  /** Original ↔ replacement of a cancelled pair; −1 otherwise. */
  docPartner: Int32Array;
  /** Per trip: doc index of its valid invoice, NO_DOC or BROKEN_LINK. */
  tripDoc: Int32Array;
}

export function buildPlan(world: World): Plan {
  const billing = billTrips(world);
  if (billing.needed > world.docTarget) leaveUnbilled(world, billing);
  const slots = slotsOf(world, billing);
  return inEmissionOrder(world, billing, slots);
}

/** Per-trip billing decisions. */
interface Billing {
  /** Instant of the trip's (first) invoice; NaN = not billed. */
  inv: Float64Array;
  /** 0 none, 1 invoice cancelled with motive 01, 2 with motive 02. */
  cancel: Uint8Array;
  /** Instant of the replacement of a cancelled invoice. */
  repl: Float64Array;
  /** 1 = idFinan points to a legacy id that does not exist. */
  broken: Uint8Array;
  /** Documents the billed trips need (two for a cancelled pair). */
  needed: number;
}

/** Nothing is billed in the last hour of the window. */
const latestDocOf = (world: World): number => world.end - HOUR;

function billTrips(world: World): Billing {
  const M = world.tripCount;
  const latestDoc = latestDocOf(world);
  const b: Billing = {
    inv: new Float64Array(M).fill(NaN),
    cancel: new Uint8Array(M),
    repl: new Float64Array(M).fill(NaN),
    broken: new Uint8Array(M),
    needed: 0,
  };
  for (let k = 0; k < M; k++) {
    const sk = tripSketch(world, k);
    const rng = streamRng(world, STREAM.plan, k);
    if (rng.chance(0.005)) {
      b.broken[k] = 1;
      continue;
    }
    const inv = invoiceTimeOf(sk, rng);
    if (!(inv <= latestDoc)) continue; // not billed (yet)
    b.inv[k] = inv;
    b.needed++;
    if (rng.chance(0.022)) {
      // The replacement goes out in office hours, from the same day to 5 days later.
      const repl = officeTimeAfter(inv, rng.int(0, 5), rng, 20, 180);
      if (repl <= latestDoc) {
        b.cancel[k] = rng.chance(0.7) ? 1 : 2;
        b.repl[k] = repl;
        b.needed++;
      }
    }
  }
  return b;
}

/** When the trip is invoiced: at dispatch (~3%), after the last offload, or never (NaN: in transit or left unbilled). */
function invoiceTimeOf(sk: TripSketch, rng: Rng): number {
  if (rng.chance(0.03)) return Math.round(sk.createdAt + (sk.firstLoad - sk.createdAt) * rng.float(0.2, 0.9));
  if (sk.lastUnload !== null && !rng.chance(0.055)) {
    return officeTimeAfter(sk.lastUnload, billingLagDays(rng, sk.client.billingLagFactor), rng, 15, 240);
  }
  return NaN;
}

/** Days from offload to invoice: 30% the same day, most within 10, a few up to 30; scaled by the client's habit. */
function billingLagDays(rng: Rng, factor: number): number {
  const r = rng.next();
  const d = r < 0.3 ? 0 : r < 0.6 ? rng.int(1, 2) : r < 0.85 ? rng.int(3, 6) : r < 0.97 ? rng.int(7, 10) : rng.int(11, 30);
  return Math.round(d * factor);
}

/**
 * An office-hours instant (08:30–19:30 Mexico City) `days` days after the day
 * of t; when that is less than minGap minutes after t, minGap–maxGap minutes after t instead.
 */
function officeTimeAfter(t: number, days: number, rng: Rng, minGap: number, maxGap: number): number {
  const at = mxDayStartAt(t) + days * DAY + Math.round(rng.float(8.5, 19.5) * HOUR);
  return at < t + minGap * MIN ? t + Math.round(rng.float(minGap, maxGap) * MIN) : at;
}

/** More billed trips than documents requested: a random subset stays unbilled. */
function leaveUnbilled(world: World, b: Billing): void {
  const billed: number[] = [];
  for (let k = 0; k < world.tripCount; k++) if (!Number.isNaN(b.inv[k]!)) billed.push(k);
  streamRng(world, STREAM.thinning).shuffle(billed);
  for (const k of billed) {
    if (b.needed <= world.docTarget) break;
    b.needed -= b.cancel[k] ? 2 : 1;
    b.inv[k] = NaN;
    b.cancel[k] = 0;
    b.repl[k] = NaN;
  }
}

/** One slot per document, trips' first then ghosts', before sorting by emission date. */
interface Slots {
  date: Float64Array;
  source: Int32Array;
  role: Uint8Array;
  partner: Int32Array;
  /** Per trip: the slot of its valid invoice, or NO_DOC. */
  tripSlot: Int32Array;
}

function slotsOf(world: World, b: Billing): Slots {
  const N = world.docTarget;
  const slots: Slots = {
    date: new Float64Array(N),
    source: new Int32Array(N),
    role: new Uint8Array(N),
    partner: new Int32Array(N).fill(-1),
    tripSlot: new Int32Array(world.tripCount).fill(NO_DOC),
  };
  const used = addTripSlots(world, b, slots);
  addGhostSlots(world, slots, used);
  return slots;
}

/** A billed trip's invoice, or its cancelled invoice and the replacement (the valid one); returns the slots used. */
function addTripSlots(world: World, b: Billing, slots: Slots): number {
  let s = 0;
  for (let k = 0; k < world.tripCount; k++) {
    if (Number.isNaN(b.inv[k]!)) continue;
    slots.date[s] = b.inv[k]!;
    slots.source[s] = k;
    if (b.cancel[k]) {
      slots.role[s] = b.cancel[k] === 1 ? ROLE.cancelled01 : ROLE.cancelled02;
      slots.partner[s] = s + 1;
      slots.date[s + 1] = b.repl[k]!;
      slots.source[s + 1] = k;
      slots.role[s + 1] = ROLE.replacement;
      slots.partner[s + 1] = s;
      slots.tripSlot[k] = s + 1;
      s += 2;
    } else {
      slots.role[s] = ROLE.normal;
      slots.tripSlot[k] = s;
      s += 1;
    }
  }
  return s;
}

/** The remaining slots bill ghost trips; exactly round(0.8% of all documents) of them are cancelled (motive 03). */
function addGhostSlots(world: World, slots: Slots, first: number): void {
  const N = world.docTarget;
  const latestDoc = latestDocOf(world);
  const ghosts = N - first;
  let cancel03Left = Math.min(ghosts, Math.round(N * 0.008));
  for (let g = 0; g < ghosts; g++) {
    const sk = ghostSketch(world, g);
    const rng = streamRng(world, STREAM.ghostPlan, g);
    const delivered = sk.lastUnload ?? sk.firstLoad;
    let inv = officeTimeAfter(delivered, billingLagDays(rng, sk.client.billingLagFactor), rng, 15, 240);
    if (inv > latestDoc) inv = Math.max(delivered, latestDoc - rng.int(0, 48) * HOUR);
    // Selection sampling: exactly cancel03Left of the remaining ghosts are cancelled.
    const cancelled = cancel03Left > 0 && rng.next() * (ghosts - g) < cancel03Left;
    if (cancelled) cancel03Left--;
    const s = first + g;
    slots.date[s] = inv;
    slots.source[s] = -(g + 1);
    slots.role[s] = cancelled ? ROLE.ghostCancelled03 : ROLE.ghost;
  }
}

/** Documents in emission order: ids and folios grow with time. */
function inEmissionOrder(world: World, b: Billing, slots: Slots): Plan {
  const N = world.docTarget;
  const M = world.tripCount;
  const order = new Int32Array(N);
  for (let i = 0; i < N; i++) order[i] = i;
  order.sort((x, y) => slots.date[x]! - slots.date[y]! || x - y);
  const posOfSlot = new Int32Array(N);
  for (let j = 0; j < N; j++) posOfSlot[order[j]!] = j;

  const plan: Plan = {
    docCount: N,
    docSource: new Int32Array(N),
    docRole: new Uint8Array(N),
    docDate: new Float64Array(N),
    docPartner: new Int32Array(N).fill(-1),
    tripDoc: new Int32Array(M).fill(NO_DOC),
  };
  for (let j = 0; j < N; j++) {
    const slot = order[j]!;
    plan.docSource[j] = slots.source[slot]!;
    plan.docRole[j] = slots.role[slot]!;
    plan.docDate[j] = slots.date[slot]!;
    const partner = slots.partner[slot]!;
    plan.docPartner[j] = partner >= 0 ? posOfSlot[partner]! : -1;
  }
  for (let k = 0; k < M; k++) {
    if (b.broken[k]) plan.tripDoc[k] = BROKEN_LINK;
    else if (slots.tripSlot[k]! >= 0) plan.tripDoc[k] = posOfSlot[slots.tripSlot[k]!]!;
  }
  return plan;
}
