import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a well-formed incoming `x-request-id` (so traces join up across services), else mint one. */
export function genRequestId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && WELL_FORMED.test(incoming) ? incoming : randomUUID();
}
