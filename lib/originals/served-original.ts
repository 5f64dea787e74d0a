/** What a download of an original answers: the bytes as kept and the file name (`<UUID>.xml`). Pure. */
import type { OriginalRecord } from './original-record.ts';

export interface ServedOriginal {
  bytes: Buffer;
  fileName: string;
}

export const servedOriginal = (record: OriginalRecord, uuid: string): ServedOriginal => ({
  bytes: Buffer.from(record.bytes.read(0, record.bytes.length())),
  fileName: `${uuid.toUpperCase()}.xml`,
});
