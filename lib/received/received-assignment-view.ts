/**
 * A received CFDI's assignment as the API shows it (PUT / DELETE /api/received-docs/{id}/assignment).
 * Pure.
 */
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';
import type { ReceivedAssignmentRow } from './received-assignments-repo.ts';

export interface ReceivedAssignmentView {
  tenant: string;
  id: string;
  uuid: string;
  vehicle: string | null;
  tripId: string | null;
  assignedAt: string | null;
}

export const assignmentView = (tenant: string, id: string, uuid: string, a: ReceivedAssignmentRow | null): ReceivedAssignmentView => ({
  tenant,
  id,
  uuid,
  vehicle: a?.vehicle ?? null,
  tripId: a?.tripId ?? null,
  assignedAt: a?.assignedAt ?? null,
});

// Checked against the spec: a field renamed on one side only fails type-checking here.
export type ReceivedAssignmentViewCheck = Conforms<ReceivedAssignmentView, components['schemas']['ReceivedAssignment']>;
