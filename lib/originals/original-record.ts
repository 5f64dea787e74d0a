/**
 * The original XML of an imported CFDI (docs/domain.md, "The original XML"): the file's bytes
 * exactly as received (CFF art. 30: kept five years and handed over as issued), never a
 * re-serialisation — an ISO-8859-1 file stays ISO-8859-1. One record per tenant and content
 * (sha256 of the bytes), naming the UUIDs it is about: the CFDI's own, or every UUID a
 * cancellation acknowledgement or request names. Pure.
 */
import type { Binary } from 'mongodb';

export type OriginalKind = 'cfdi' | 'cancellation';

export interface OriginalRecord {
  /** `<tenant>:<sha256>`: the same bytes imported again are the same record. */
  _id: string;
  tenant: string;
  sha256: string;
  kind: OriginalKind;
  /** Upper-case UUIDs the file is about (a CFDI: its own; an acknowledgement: the ones it cancels). */
  uuids: string[];
  bytes: Binary;
  size: number;
  /** The file's name in the import (inside an archive: `archive.zip/path`), for people. */
  name: string;
  /** The latest import of these bytes: a UUID's latest original is the one served. */
  importedAt: Date;
}

/** What an import hands over to be kept: the record without its derived fields. */
export interface OriginalFile {
  sha256: string;
  kind: OriginalKind;
  uuids: readonly string[];
  bytes: Buffer;
  name: string;
}

export const originalId = (tenant: string, sha256: string): string => `${tenant}:${sha256}`;

/**
 * What a stored financial document or received CFDI keeps to say its original XML is kept: its
 * UUID, not the file's sha256, so the same CFDI imported again with other bytes (an addenda
 * added) does not change the document (the download serves the UUID's latest original).
 */
export const ORIGINAL_KEY_PREFIX = 'original:';
export const originalKey = (uuid: string): string => `${ORIGINAL_KEY_PREFIX}${uuid.toUpperCase()}`;
/** Whether a stored key names a kept original (documents imported before originals were kept, and generated ones, do not). */
export const isOriginalKey = (key: string | null | undefined): boolean => typeof key === 'string' && key.startsWith(ORIGINAL_KEY_PREFIX);
