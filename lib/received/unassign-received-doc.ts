/**
 * DELETE /api/received-docs/{id}/assignment: the document's cost goes back to a plate its concepts
 * name, else to the spread (docs/domain.md, "Costs and margin"). Idempotent; another tenant's
 * document is "not found".
 */
import type { ServiceContext } from '../context.ts';
import { notFound } from '../http/api-error.ts';
import { writeAssignments } from './received-assignments-repo.ts';
import { findReceivedDocById } from './received-repo.ts';
import { assignmentView, type ReceivedAssignmentView } from './received-assignment-view.ts';
import { writeMarkingAssignmentDays } from './received-doc-days.ts';

export async function unassignReceivedDoc(ctx: ServiceContext, tenant: string, input: { id: string }): Promise<ReceivedAssignmentView> {
  const doc = await findReceivedDocById(ctx.db, tenant, input.id, ctx.config.queryTimeoutMs);
  if (!doc) throw notFound('no such received document for this tenant');
  await writeMarkingAssignmentDays(ctx.db, tenant, [doc], () => writeAssignments(ctx.db, tenant, [], [doc._id]));
  return assignmentView(tenant, doc._id, doc.uuid, null);
}
