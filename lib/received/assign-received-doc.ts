/**
 * PUT /api/received-docs/{id}/assignment (docs/domain.md, "Costs and margin"): the carrier says
 * where one received CFDI's cost goes, a vehicle or a trip. The document, the trip and the vehicle
 * must be the tenant's: anything else is "not found", so another tenant's ids never leak.
 */
import type { ServiceContext } from '../context.ts';
import { notFound } from '../http/api-error.ts';
import { existingTripIds, existingVehicleIds } from '../trips/trips-repo.ts';
import { findAssignments, writeAssignments, type ReceivedAssignmentRow } from './received-assignments-repo.ts';
import { findReceivedDocById } from './received-repo.ts';
import { assignmentView, type ReceivedAssignmentView } from './received-assignment-view.ts';
import { writeMarkingAssignmentDays } from './received-doc-days.ts';

/** Why the target is not a trip or vehicle of the tenant; null when it is. */
async function missingTarget(ctx: ServiceContext, tenant: string, target: { vehicle?: string; tripId?: string }): Promise<string | null> {
  const t = ctx.config.queryTimeoutMs;
  if (target.tripId !== undefined && !(await existingTripIds(ctx.db, tenant, [target.tripId], t)).has(target.tripId))
    return `no trip ${target.tripId} for this tenant`;
  if (target.vehicle !== undefined && !(await existingVehicleIds(ctx.db, tenant, [target.vehicle], t)).has(target.vehicle))
    return `no vehicle ${target.vehicle} on this tenant's trips`;
  return null;
}

export async function assignReceivedDoc(
  ctx: ServiceContext,
  tenant: string,
  input: { id: string; body: { vehicle?: string; tripId?: string } },
): Promise<ReceivedAssignmentView> {
  const doc = await findReceivedDocById(ctx.db, tenant, input.id, ctx.config.queryTimeoutMs);
  if (!doc) throw notFound('no such received document for this tenant');
  // Trimmed as the bulk rows and the CSV are (assignments-csv.ts): "V1 " is vehicle V1 whichever way it is sent.
  const target = { vehicle: input.body.vehicle?.trim(), tripId: input.body.tripId?.trim() };
  const missing = await missingTarget(ctx, tenant, target);
  if (missing) throw notFound(missing);
  const row: ReceivedAssignmentRow = {
    _id: doc._id,
    tenant,
    vehicle: target.vehicle ?? null,
    tripId: target.tripId ?? null,
    assignedAt: ctx.now().toISOString(),
  };
  const before = (await findAssignments(ctx.db, tenant, [doc._id], ctx.config.queryTimeoutMs)).get(doc._id);
  // The same assignment again changes nothing, not even its instant (idempotent).
  if (before && before.vehicle === row.vehicle && before.tripId === row.tripId) return assignmentView(tenant, doc._id, doc.uuid, before);
  await writeMarkingAssignmentDays(ctx.db, tenant, [doc], () => writeAssignments(ctx.db, tenant, [row], []));
  return assignmentView(tenant, doc._id, doc.uuid, row);
}
