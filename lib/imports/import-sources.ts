/**
 * What an import reads: single XML files and zip archives, in memory (an HTTP
 * body) or on disk (the CLI), turned into a stream of entries, each either a
 * byte stream to parse or a rejection. Limits are enforced while streaming,
 * never trusting sizes an archive declares:
 *
 * - entries per import (`maxFiles`), checked from the zip's central directory
 *   before anything is read;
 * - bytes per file (`maxFileBytes`): declared size first, then counted as it
 *   inflates (yauzl also fails an entry whose real size differs from its header);
 * - uncompressed bytes per import (`maxTotalBytes`), counted;
 * - compression ratio per entry (`maxCompressionRatio`), the zip-bomb signature.
 *
 * Each entry is checked on its own, so that one bad entry never costs the archive's others:
 * its name (an unsafe path, `..`, absolute or with a drive letter, is that entry's rejection;
 * yauzl's own check would fail the whole archive, so names are decoded here) and its bytes
 * (their CRC-32 against the one the archive declares: yauzl does not check it).
 *
 * What is read: `.xml` files (CFDI, cancellation requests and acknowledgements) and `.txt`
 * files (the SAT bulk download's metadata, lib/imports/sat-metadata.ts; any other text is
 * ignored once its first line is seen). Anything else a PAC's or the SAT's download holds
 * (the PDF of each invoice, images) is not a CFDI: it is ignored, named in the report as
 * such, and counts neither as read nor as rejected (docs/domain.md, "Importing a carrier's
 * files"). Nested archives and encrypted entries are rejected per entry.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import type yauzl from 'yauzl';
import { onFirstUse } from '../shared/on-first-use.ts';
import { ImportRejection } from './rejection.ts';
import type { ImportLimits } from '../config.ts';

export type ImportInput =
  /** One XML file or one zip archive in memory (`zip` forces the archive reading). */
  | { name: string; data: Buffer; zip?: boolean }
  /** One XML file or zip archive on disk. */
  | { name: string; path: string }
  /** A file already refused by the caller (e.g. content that is not base64). */
  | { name: string; rejection: string }
  /** A file the caller found is not a CFDI (a folder's PDF): listed as ignored. */
  | { name: string; ignored: true };

/** How an entry's bytes are read: as XML, or as text (the SAT's bulk-download metadata). */
export type EntryFormat = 'xml' | 'text';

export type ImportEntry =
  { name: string; format: EntryFormat; open: () => Promise<Readable | Buffer> } | { name: string; rejection: string } | { name: string; ignored: true };

const isZipName = (name: string): boolean => /\.zip$/i.test(name);
const isXmlName = (name: string): boolean => /\.xml$/i.test(name);
const isTextName = (name: string): boolean => /\.txt$/i.test(name);

/** What a file name says it holds: what the import reads, or `other` (a PDF, an image…: ignored). */
export function formatOfName(name: string): EntryFormat | 'zip' | 'other' {
  if (isXmlName(name)) return 'xml';
  if (isTextName(name)) return 'text';
  if (isZipName(name)) return 'zip';
  return 'other';
}

/** The SAT metadata's header starts so (after a byte order mark, if any). */
const METADATA_HEAD = Buffer.from('Uuid~');
const startsWithMetadata = (data: Buffer): boolean => {
  const start = data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? 3 : 0;
  return data.subarray(start, start + METADATA_HEAD.length).equals(METADATA_HEAD);
};
/** First byte that is not blank (after a UTF-8 byte order mark): '<' for XML. */
const looksLikeXml = (data: Buffer): boolean => {
  let i = data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? 3 : 0;
  while (i < data.length && (data[i] === 0x20 || data[i] === 0x09 || data[i] === 0x0a || data[i] === 0x0d)) i++;
  return data[i] === 0x3c;
};

/**
 * A file in memory (an HTTP body, a JSON file): read as text when named `.txt` or when it starts
 * as the SAT metadata does; ignored when its name says it is something else (`.pdf`…) and its
 * bytes are not XML; otherwise read as XML (a body or JSON file may have any name).
 */
function formatOfData(name: string, data: Buffer): EntryFormat | 'other' {
  if (isTextName(name) || startsWithMetadata(data)) return 'text';
  if (!isXmlName(name) && /\.[A-Za-z0-9]{1,8}$/.test(name) && !looksLikeXml(data)) return 'other';
  return 'xml';
}
const looksLikeZip = (data: Buffer): boolean =>
  data.length >= 4 && data[0] === 0x50 && data[1] === 0x4b && (data[2] === 3 || data[2] === 5) && (data[3] === 4 || data[3] === 6);

/** Budget shared by every entry of one import. */
export class ImportBudget {
  files = 0;
  bytes = 0;
  constructor(readonly limits: ImportLimits) {}
}

export async function* expandInputs(inputs: Iterable<ImportInput> | AsyncIterable<ImportInput>, budget: ImportBudget): AsyncGenerator<ImportEntry> {
  const { limits } = budget;
  for await (const input of inputs) {
    if ('rejection' in input || 'ignored' in input) {
      budget.files += 1;
      yield input;
      continue;
    }
    const inMemory = 'data' in input;
    const zip = inMemory ? (input.zip ?? (isZipName(input.name) || looksLikeZip(input.data))) : isZipName(input.name);
    if (zip) {
      yield* zipEntries(input, budget);
      continue;
    }
    if (++budget.files > limits.maxFiles) {
      yield { name: input.name, rejection: `more than ${limits.maxFiles} files in one import (IMPORT_MAX_FILES)` };
      continue;
    }
    const format = inMemory ? formatOfData(input.name, input.data) : formatOfName(input.name);
    if (format === 'other' || format === 'zip') {
      yield { name: input.name, ignored: true };
      continue;
    }
    const size = inMemory ? input.data.length : (await stat(input.path)).size;
    const max = maxBytesOf(format, limits);
    if (size > max.bytes) {
      yield { name: input.name, rejection: `file of ${size} bytes is larger than ${max.bytes} bytes (${max.setting})` };
      continue;
    }
    if (budget.bytes + size > limits.maxTotalBytes) {
      yield { name: input.name, rejection: `the import exceeds ${limits.maxTotalBytes} bytes in all (IMPORT_MAX_TOTAL_BYTES)` };
      continue;
    }
    budget.bytes += size;
    yield { name: input.name, format, open: async () => (inMemory ? input.data : createReadStream(input.path)) };
  }
}

type ReadableInput = Extract<ImportInput, { data: Buffer } | { path: string }>;

/** The zip reader, loaded by the first archive an import reads rather than by every process that builds the app. */
const zipReader = onFirstUse(async () => (await import('yauzl')).default);
type ZipReader = Awaited<ReturnType<typeof zipReader>>;

async function openZip(input: ReadableInput): Promise<yauzl.ZipFile> {
  const reader = await zipReader();
  return new Promise((resolve, reject) => {
    // Names are decoded and checked per entry (entryNameOf): with `decodeStrings: true`, yauzl fails the
    // whole archive on one unsafe name. Nothing here reads the archive's or the entries' comments.
    const options = { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false, decodeStrings: false };
    const cb = (err: Error | null, zip: yauzl.ZipFile) => (err ? reject(err) : resolve(zip));
    if ('data' in input) reader.fromBuffer(input.data, options, cb);
    else reader.open(input.path, options, cb);
  });
}

function readAllEntries(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    zip.on('entry', (e: yauzl.Entry) => {
      entries.push(e);
      zip.readEntry();
    });
    zip.on('end', () => resolve(entries));
    zip.on('error', reject);
    zip.readEntry();
  });
}

/** Longest entry name an unsafe entry's rejection shows (the archive may hold 65,535 bytes of it). */
const MAX_SHOWN_NAME_CHARS = 300;

const shownName = (name: string): string => {
  if (name.length <= MAX_SHOWN_NAME_CHARS) return name;
  let end = MAX_SHOWN_NAME_CHARS - 1;
  const last = name.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // not half a surrogate pair
  return `${name.slice(0, end)}…`;
};

/** Why an entry's path may not be used as a name (a superset of yauzl's validateFileName), or null. */
function unsafeNameReason(reader: ZipReader, fileName: string): string | null {
  if (fileName.includes('\0')) return 'unsafe entry name: it holds a NUL character';
  if (/^[a-zA-Z]:/.test(fileName)) return 'unsafe entry name: an absolute path with a drive letter';
  if (fileName.startsWith('/')) return 'unsafe entry name: an absolute path';
  if (fileName.split('/').includes('..')) return 'unsafe entry name: a ".." segment leads out of the archive';
  if (reader.validateFileName(fileName) !== null) return 'unsafe entry name: refused by the zip reader';
  return null;
}

/**
 * An entry's name as yauzl decodes it with `decodeStrings: true` (UTF-8 when general-purpose bit 11
 * is set, else CP437; the Info-ZIP Unicode Path extra field 0x7075 when its CRC matches; backslashes
 * read as `/`), or, for an unsafe name, the rejection: the name as the archive writes it, capped.
 */
function entryNameOf(reader: ZipReader, entry: yauzl.Entry): { fileName: string; unsafe?: { shown: string; rejection: string } } {
  const fileName = reader.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, false);
  const rejection = unsafeNameReason(reader, fileName);
  if (rejection === null) return { fileName };
  const asWritten = reader.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
  return { fileName, unsafe: { shown: shownName(asWritten), rejection } };
}

/** A macOS resource-fork entry (AppleDouble): under `__MACOSX/`, or a `._` name. */
const isAppleDouble = (fileName: string): boolean => fileName.startsWith('__MACOSX/') || /(^|\/)\._[^/]*$/.test(fileName);

/**
 * An entry's bytes. An entry the reader cannot open (a compression method other than deflate, a
 * damaged local header) or read to its end (a CRC or size mismatch) is that file's rejection, not
 * the import's failure: the archive's other entries are still imported. The CRC is known only at
 * the end, once the XML reader has every byte (it writes nothing before). The SAT metadata is
 * applied in batches as it streams, so a metadata entry is first read once just to check it.
 */
async function openEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, format: EntryFormat): Promise<Readable> {
  if (format === 'text') await checkMetadataEntry(zip, entry);
  return Readable.from(checkedChunks(await openEntryStream(zip, entry), entry));
}

const openEntryStream = (zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Readable> =>
  new Promise((resolve, reject) =>
    zip.openReadStream(entry, (err, stream) => (err ? reject(new ImportRejection(`cannot open the zip entry: ${err.message}`)) : resolve(stream))),
  );

/** The entry's chunks, its CRC-32 computed as they pass; a read error or a CRC mismatch at the end is an ImportRejection. */
async function* checkedChunks(stream: Readable, entry: yauzl.Entry): AsyncGenerator<Buffer> {
  let crc = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      crc = crc32(chunk, crc);
      yield chunk;
    }
  } catch (err) {
    throw new ImportRejection(`cannot read the zip entry: ${(err as Error).message}`);
  } finally {
    stream.destroy();
  }
  if (crc !== entry.crc32) {
    const hex = (n: number) => `0x${n.toString(16).padStart(8, '0')}`;
    throw new ImportRejection(
      `cannot read the zip entry: CRC-32 mismatch (data ${hex(crc)}, archive ${hex(entry.crc32)}): the entry is damaged or was altered`,
    );
  }
}

/** Reads a text entry through once, unless its first bytes show it is not the SAT metadata (then its reader stops at the first line). */
async function checkMetadataEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<void> {
  let head = Buffer.alloc(0);
  for await (const chunk of checkedChunks(await openEntryStream(zip, entry), entry)) {
    if (head.length >= 8) continue;
    head = Buffer.concat([head, chunk]);
    if (head.length >= 8 && !startsWithMetadata(head)) return;
  }
}

async function* zipEntries(input: ReadableInput, budget: ImportBudget): AsyncGenerator<ImportEntry> {
  const { limits } = budget;
  if ('path' in input) {
    const size = (await stat(input.path)).size;
    if (size > limits.maxTotalBytes) {
      yield { name: input.name, rejection: `archive of ${size} bytes is larger than ${limits.maxTotalBytes} bytes (IMPORT_MAX_TOTAL_BYTES)` };
      return;
    }
  }
  let zip: yauzl.ZipFile;
  const reader = await zipReader();
  try {
    zip = await openZip(input);
  } catch (err) {
    yield { name: input.name, rejection: `not a readable zip archive: ${(err as Error).message}` };
    return;
  }
  try {
    if (budget.files + zip.entryCount > limits.maxFiles) {
      yield { name: input.name, rejection: `archive has ${zip.entryCount} entries; at most ${limits.maxFiles} files per import (IMPORT_MAX_FILES)` };
      return;
    }
    let entries: yauzl.Entry[];
    try {
      entries = await readAllEntries(zip);
    } catch (err) {
      yield { name: input.name, rejection: `not a readable zip archive: ${(err as Error).message}` };
      return;
    }
    for (const entry of entries) {
      const { fileName, unsafe } = entryNameOf(reader, entry);
      if (fileName.endsWith('/')) continue; // a folder (nothing is read from it, whatever its name)
      budget.files += 1;
      if (unsafe) {
        yield { name: `${input.name}/${unsafe.shown}`, rejection: unsafe.rejection };
        continue;
      }
      const name = `${input.name}/${fileName}`;
      const format = formatOfName(fileName);
      // macOS's Archive Utility adds, beside each file, its resource fork (`__MACOSX/…/._name.xml`): not a CFDI.
      if (isAppleDouble(fileName)) {
        yield { name, ignored: true };
        continue;
      }
      if (format === 'zip') {
        yield { name, rejection: 'nested archives are not read: unzip it or send it on its own' };
        continue;
      }
      if (format === 'other') {
        yield { name, ignored: true };
        continue;
      }
      if (entry.isEncrypted()) {
        yield { name, rejection: 'encrypted zip entry' };
        continue;
      }
      const max = maxBytesOf(format, limits);
      if (entry.uncompressedSize > max.bytes) {
        yield { name, rejection: `entry of ${entry.uncompressedSize} bytes is larger than ${max.bytes} bytes (${max.setting})` };
        continue;
      }
      const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
      if (ratio > limits.maxCompressionRatio) {
        yield {
          name,
          rejection: `compression ratio ${Math.round(ratio)}:1 exceeds ${limits.maxCompressionRatio}:1 (IMPORT_MAX_COMPRESSION_RATIO): a zip bomb?`,
        };
        continue;
      }
      if (budget.bytes + entry.uncompressedSize > limits.maxTotalBytes) {
        yield { name, rejection: `the import exceeds ${limits.maxTotalBytes} uncompressed bytes in all (IMPORT_MAX_TOTAL_BYTES)` };
        continue;
      }
      budget.bytes += entry.uncompressedSize;
      yield { name, format, open: () => openEntry(zip, entry, format) };
    }
  } finally {
    zip.close();
  }
}

/**
 * Reads an entry's bytes as chunks, failing once more than `maxBytes` arrive
 * (whatever the archive declared). The caller parses chunk by chunk.
 */
export async function* boundedChunks(source: Readable | Buffer, maxBytes: number, setting?: string): AsyncGenerator<Buffer> {
  if (Buffer.isBuffer(source)) {
    if (source.length > maxBytes) throw new SizeExceeded(maxBytes, setting);
    yield source;
    return;
  }
  let seen = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      seen += chunk.length;
      if (seen > maxBytes) throw new SizeExceeded(maxBytes, setting);
      yield chunk;
    }
  } finally {
    source.destroy();
  }
}

export class SizeExceeded extends Error {
  constructor(
    readonly maxBytes: number,
    setting = 'IMPORT_MAX_FILE_BYTES',
  ) {
    super(`larger than ${maxBytes} bytes (${setting})`);
  }
}

/**
 * Bytes one file may hold: an XML file is parsed into a tree (IMPORT_MAX_FILE_BYTES); the SAT
 * metadata is read line by line, so only the import's total bounds it (IMPORT_MAX_TOTAL_BYTES).
 */
export const maxBytesOf = (format: EntryFormat, limits: ImportLimits): { bytes: number; setting: string } =>
  format === 'text' ? { bytes: limits.maxTotalBytes, setting: 'IMPORT_MAX_TOTAL_BYTES' } : { bytes: limits.maxFileBytes, setting: 'IMPORT_MAX_FILE_BYTES' };
