/**
 * POST /api/received-assignments (docs/domain.md, "Costs and margin"): many assignments of
 * received CFDIs to a vehicle or a trip at once, as a CSV (lib/received/assignments-csv.ts) or the
 * same rows as JSON. Lines are independent: a rejected line changes nothing and the others apply;
 * a document, trip or vehicle that is not the tenant's rejects its line. The report has one
 * entry per line, so it grows with the request (bounded by 20,000 lines: a file with more is refused whole).
 */
import type { ServiceContext } from '../context.ts';
import { badRequest } from '../http/api-error.ts';
import { existingTripIds, existingVehicleIds } from '../trips/trips-repo.ts';
import { CsvError } from '../trips/deliveries-csv.ts';
import { assignmentLine, parseAssignmentsCsv, type AssignmentLine } from './assignments-csv.ts';
import { findAssignments, findReceivedByUuids, writeAssignments, type ReceivedAssignmentRow } from './received-assignments-repo.ts';
import { receivedDocId } from './received-rows.ts';
import { writeMarkingAssignmentDays } from './received-doc-days.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';

/** Most lines in one request (the JSON schema says the same). */
export const MAX_ASSIGNMENT_ROWS = 20_000;

export type AssignmentsInput = { csv: Buffer } | { rows: readonly { uuid: string; vehicle?: string; tripId?: string }[] };

export interface AssignmentsReport {
  tenant: string;
  summary: { rows: number; assigned: number; unassigned: number; rejected: number };
  rows: { line: number; uuid: string; status: 'assigned' | 'unassigned' | 'rejected'; reason?: string }[];
}

function readLines(input: AssignmentsInput): AssignmentLine[] {
  if ('rows' in input) return input.rows.map((r, i) => assignmentLine(i + 1, r.uuid, r.vehicle ?? '', r.tripId ?? ''));
  // Not UTF-8: the bytes that are not become U+FFFD and only the values holding them fail.
  try {
    return parseAssignmentsCsv(new TextDecoder('utf-8').decode(input.csv), MAX_ASSIGNMENT_ROWS);
  } catch (err) {
    if (err instanceof CsvError)
      throw badRequest('Invalid CSV', err.details, { reason: 'invalid_body', fields: err.details.map((detail) => ({ in: 'body', name: '', detail })) });
    throw err;
  }
}

/** Many assignments: each line checked against the tenant's documents, trips, vehicles and assignments (four queries), then one bulk write. */
export async function assignReceivedDocs(ctx: ServiceContext, tenant: string, input: AssignmentsInput): Promise<AssignmentsReport> {
  const lines = readLines(input);
  const t = ctx.config.queryTimeoutMs;
  const reasons = new Map<AssignmentLine, string>();
  // A UUID given again: the later line wins, the earlier is rejected (and says which), whatever the later one
  // holds: a later line rejected for its vehicle, or past the line limit, still leaves the document as it was.
  const lastOf = new Map<string, AssignmentLine>();
  for (const l of lines) lastOf.set(l.uuid.toUpperCase(), l);
  for (const l of lines) {
    const last = lastOf.get(l.uuid.toUpperCase())!;
    if (l.problems.length) reasons.set(l, l.problems.join('; '));
    else if (last !== l) reasons.set(l, `superseded by line ${last.line} (the same uuid)`);
  }
  const live = lines.filter((l) => !reasons.has(l));
  const [docs, tripIds, vehicles, assigned] = await Promise.all([
    findReceivedByUuids(
      ctx.db,
      tenant,
      live.map((l) => receivedDocId(tenant, l.uuid)),
      t,
    ),
    existingTripIds(
      ctx.db,
      tenant,
      live.flatMap((l) => (l.tripId ? [l.tripId] : [])),
      t,
    ),
    existingVehicleIds(
      ctx.db,
      tenant,
      live.flatMap((l) => (l.vehicle ? [l.vehicle] : [])),
      t,
    ),
    findAssignments(
      ctx.db,
      tenant,
      live.map((l) => receivedDocId(tenant, l.uuid)),
      t,
    ),
  ]);
  const now = ctx.now().toISOString();
  const set: ReceivedAssignmentRow[] = [];
  const remove: string[] = [];
  for (const l of live) {
    const id = receivedDocId(tenant, l.uuid);
    if (!docs.has(id)) reasons.set(l, 'no such received document for this tenant');
    else if (l.tripId && !tripIds.has(l.tripId)) reasons.set(l, `no trip ${l.tripId} for this tenant`);
    else if (l.vehicle && !vehicles.has(l.vehicle)) reasons.set(l, `no vehicle ${l.vehicle} on this tenant's trips`);
    else {
      // As the single PUT: the same assignment again (or removing none) writes nothing, not even a new instant.
      const before = assigned.get(id);
      if (!l.tripId && !l.vehicle) {
        if (before) remove.push(id);
      } else if (!before || before.vehicle !== l.vehicle || before.tripId !== l.tripId)
        set.push({ _id: id, tenant, vehicle: l.vehicle, tripId: l.tripId, assignedAt: now });
    }
  }
  const written = [...set.map((r) => r._id), ...remove].flatMap((id) => docs.get(id) ?? []);
  await writeMarkingAssignmentDays(ctx.db, tenant, written, () => writeAssignments(ctx.db, tenant, set, remove));
  const rows = lines.map((l) => {
    const reason = reasons.get(l);
    if (reason !== undefined) return { line: l.line, uuid: l.uuid, status: 'rejected' as const, reason };
    return { line: l.line, uuid: l.uuid, status: l.tripId || l.vehicle ? ('assigned' as const) : ('unassigned' as const) };
  });
  const count = (s: string) => rows.filter((r) => r.status === s).length;
  return { tenant, summary: { rows: rows.length, assigned: count('assigned'), unassigned: count('unassigned'), rejected: count('rejected') }, rows };
}

// Checked against the spec: a field renamed on one side only fails type-checking here.
export type AssignmentsReportCheck = Conforms<AssignmentsReport, components['schemas']['ReceivedAssignmentsReport']>;
