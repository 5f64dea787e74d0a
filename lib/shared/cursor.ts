import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError, invalidQuery } from '../http/api-error.ts';

/**
 * Keyset pagination cursors: opaque to clients, tamper-evident (HMAC-SHA256
 * with a service secret) and bound to what they continue: the tenant, the
 * list, its sort and its filters. Never a silent restart:
 * - not in the documented form (spec: Cursor's pattern) → 400, by the schema;
 * - in that form but not issued for this walk (altered, forged, another key's,
 *   another list's, other filters) → 404: like another tenant's id, it
 *   designates no page here. Not 400 because the form is all a schema can state,
 *   and a request the schema allows is one a consumer's contract tool
 *   (Schemathesis' positive_data_acceptance) expects to be accepted or not found.
 */
export type KeyValue = string | number;

export interface CursorBinding {
  /** Which list (`financial-docs`, `shipments`). */
  list: string;
  tenant: string;
  /** Sort name (`default` or `sync`). */
  sort: string;
  /** Fingerprint of the filters (filtersFingerprint). */
  filters: string;
}

export interface CursorPosition {
  /** Sort key of the last item returned. */
  key: KeyValue[];
  /** Matching total counted on the first page of the walk. */
  total: number;
  /** Page number the cursor leads to. */
  page: number;
  /**
   * Records on the pages before it. Absent from cursors issued before it was carried: those
   * pages are then taken to be of the limit asked now.
   */
  walked?: number;
}

interface Payload {
  v: 1;
  l: string;
  t: string;
  s: string;
  f: string;
  k: KeyValue[];
  n: number;
  p: number;
  o?: number;
}

const b64 = (buf: Buffer): string => buf.toString('base64url');
const sign = (secret: Buffer, body: string): Buffer => createHmac('sha256', secret).update(body).digest();

/** Stable fingerprint of a filter object (keys sorted, undefined left out). */
export function filtersFingerprint(filters: Record<string, unknown>): string {
  const canonical = JSON.stringify(
    Object.keys(filters)
      .sort()
      .filter((k) => filters[k] !== undefined)
      .map((k) => [k, filters[k]]),
  );
  return b64(createHash('sha256').update(canonical).digest().subarray(0, 12));
}

export function encodeCursor(secret: Buffer, binding: CursorBinding, position: CursorPosition): string {
  const payload: Payload = {
    v: 1,
    l: binding.list,
    t: binding.tenant,
    s: binding.sort,
    f: binding.filters,
    k: position.key,
    n: position.total,
    p: position.page,
    ...(position.walked === undefined ? {} : { o: position.walked }),
  };
  const body = b64(Buffer.from(JSON.stringify(payload), 'utf8'));
  return `${body}.${b64(sign(secret, body))}`;
}

const invalid = (why: string) => invalidQuery('cursor', `cursor ${why}; start again without cursor`);
const unknown = (why: string) => {
  const detail = `cursor ${why}; start again without cursor`;
  return new ApiError(404, 'Not Found', [detail], { reason: 'invalid_cursor', fields: [{ in: 'query', name: 'cursor', detail }] });
};

const isKey = (k: unknown): k is KeyValue[] =>
  Array.isArray(k) && k.length > 0 && k.every((v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)));

/** The position a cursor stands for, after checking its signature and that it belongs to this request. */
export function decodeCursor(secret: Buffer, token: string, expected: CursorBinding): CursorPosition {
  const [body, sig, ...rest] = token.split('.');
  if (!body || !sig || rest.length) throw invalid('is malformed');
  // The signature's text is compared, not its decoded bytes: the last of its 43 characters holds 2 unused bits, which
  // a decoder ignores, so other spellings of one signature would pass.
  const given = Buffer.from(sig, 'utf8');
  const wanted = Buffer.from(b64(sign(secret, body)), 'utf8');
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) throw unknown('is not one this service issued (signature mismatch)');
  let p: Payload;
  try {
    p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
  } catch {
    throw invalid('is malformed');
  }
  if (p.v !== 1 || !isKey(p.k) || !Number.isInteger(p.n) || !Number.isInteger(p.p) || (p.o !== undefined && !Number.isInteger(p.o)))
    throw invalid('is malformed');
  // Another tenant's cursor says nothing about which tenant it was: just "not for this request".
  if (p.t !== expected.tenant || p.l !== expected.list) throw unknown('belongs to another list or API key');
  if (p.s !== expected.sort || p.f !== expected.filters)
    throw unknown('was issued for other filters (filters and updatedSince must stay the same along a walk)');
  return { key: p.k, total: p.n, page: p.p, ...(p.o === undefined ? {} : { walked: p.o }) };
}
