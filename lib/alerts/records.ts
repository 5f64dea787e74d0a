/**
 * Alert records (`alerts` collection): the result of one job's evaluation.
 * `_id` is the job id, so a job can never store two records, even if a lock
 * expired and two workers evaluated it.
 */
import type { AlertFinding, AlertSummary, RuleOutcome } from './rules.ts';
import { readExtraData, type StoredExtraData } from './extra-data.ts';
import { alertSubject, type AlertJobData, type AlertSubject } from './jobs.ts';

export interface AlertRecordDocument extends AlertSubject {
  /** Job id (hex). */
  _id: string;
  jobId: string;
  /** Serialised, as on the job (see extra-data.ts). */
  extraData: StoredExtraData;
  dueDate: Date;
  evaluatedAt: Date;
  status: RuleOutcome['status'];
  message: string;
  summary: AlertSummary;
  findings: AlertFinding[];
  truncated: boolean;
  attempts: number;
  /** Worker instance that produced the record (diagnostics, not in the API). */
  worker: string;
}

export function alertRecordDocument(
  jobId: string,
  data: AlertJobData,
  result: RuleOutcome,
  meta: { evaluatedAt: Date; attempts: number; worker: string },
): AlertRecordDocument {
  return {
    _id: jobId,
    jobId,
    ...alertSubject(data),
    extraData: data.extraData ?? '{}',
    dueDate: data.dueDate,
    evaluatedAt: meta.evaluatedAt,
    status: result.status,
    message: result.message,
    summary: result.summary,
    findings: result.findings,
    truncated: result.truncated,
    attempts: meta.attempts,
    worker: meta.worker,
  };
}

/** API shape (AlertRecord in the spec). */
export interface AlertRecordView extends Omit<AlertRecordDocument, '_id' | 'dueDate' | 'evaluatedAt' | 'worker' | 'extraData'> {
  id: string;
  extraData: Record<string, unknown>;
  dueDate: string;
  evaluatedAt: string;
}

/** A record as the API shows it; `findingsLimit` lists its first findings only (`truncated` then says more were found). */
export function alertRecordView(doc: AlertRecordDocument, findingsLimit = Infinity): AlertRecordView {
  const { _id, dueDate, evaluatedAt, worker: _worker, extraData, findings, truncated, ...rest } = doc;
  return {
    id: _id,
    ...rest,
    findings: findings.slice(0, findingsLimit),
    truncated: truncated || findings.length > findingsLimit,
    extraData: readExtraData(extraData),
    dueDate: dueDate.toISOString(),
    evaluatedAt: evaluatedAt.toISOString(),
  };
}
