/**
 * The printed form of a kept original (docs/domain.md, "The printed form"): its XML read and
 * rendered as a PDF, `<UUID>.pdf`. Bounded in work: an original over PRINT_MAX_XML_BYTES, more
 * XML elements than PRINT_XML_LIMITS allow, or more than MAX_PAGES pages is refused with 413
 * (`payload_too_large`) before or while rendering; the XML itself is still served. Pure.
 */
import { ApiError } from '../http/api-error.ts';
import { ImportRejection } from '../imports/rejection.ts';
import type { OriginalRecord } from './original-record.ts';
import { NotPrintable, readPrintedCfdi } from './printed-cfdi-model.ts';
import { PrintTooLong, renderPrintedCfdi } from './printed-cfdi.ts';
import { servedOriginal } from './served-original.ts';

/** 1 MiB of XML: a few thousand concepts, far beyond a freight invoice; its rendering takes about a second. */
export const PRINT_MAX_XML_BYTES = 1024 * 1024;

export interface ServedPrintedForm {
  bytes: Buffer;
  fileName: string;
}

const tooLarge = (uuid: string, why: string): ApiError =>
  new ApiError(413, 'Payload Too Large', [
    `the printed form of CFDI ${uuid} is not rendered: ${why}; download the original XML (GET /api/cfdi-originals/${uuid})`,
  ]);

export async function printedFormOf(record: OriginalRecord, uuid: string): Promise<ServedPrintedForm> {
  const id = uuid.toUpperCase();
  if (record.size > PRINT_MAX_XML_BYTES) {
    throw tooLarge(id, `the original XML is ${record.size} bytes, more than the ${PRINT_MAX_XML_BYTES} bytes a printed form is rendered for`);
  }
  const { bytes } = servedOriginal(record, id);
  try {
    return { bytes: await renderPrintedCfdi(readPrintedCfdi(bytes)), fileName: `${id}.pdf` };
  } catch (err) {
    // The file was read when it was imported: what fails here is a limit of the printed form (elements, pages).
    if (err instanceof ImportRejection || err instanceof PrintTooLong) throw tooLarge(id, err.message);
    if (err instanceof NotPrintable) throw new ApiError(404, 'Not Found', [`CFDI ${id} has no printed form: ${err.message}`]);
    throw err;
  }
}
