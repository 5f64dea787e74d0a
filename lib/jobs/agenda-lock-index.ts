import type { IndexDescription } from 'mongodb';

/**
 * The index Agenda's lock query needs (findAndLockNextJob), in every collection an Agenda worker
 * polls. The workers create it themselves (lib/jobs/agenda-worker.ts passes MongoBackend
 * `ensureIndex: false`), with the rest of their area's indexes.
 */
export const AGENDA_LOCK_INDEX: IndexDescription = { key: { name: 1, nextRunAt: 1, priority: -1, lockedAt: 1, disabled: 1 }, name: 'findAndLockNextJobIndex' };
