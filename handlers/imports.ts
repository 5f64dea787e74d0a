import type { FastifyReply } from 'fastify';
import type { HandlerDeps, HandlerMap } from './types.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { runUntilStopped } from './long-running.ts';
import { ImportAborted, importDocuments, type ImportReport } from '../lib/imports/import-documents.ts';
import { importDocumentsXml } from '../lib/imports/import-documents-xml.ts';
import { importDocumentsZip } from '../lib/imports/import-documents-zip.ts';
import type { ImportInput } from '../lib/imports/import-sources.ts';
import { textFileBytes } from '../lib/imports/text-file-bytes.ts';
import type { components } from '../generated/api.d.ts';

type ImportRequest = components['schemas']['ImportRequest'];

const BASE64_RE = /^[A-Za-z0-9+/\r\n]*={0,2}\s*$/;

/** The request body as import inputs: raw XML or zip bytes, or the files of a JSON body. */
function inputsOf(body: unknown, mediaType: string): ImportInput[] {
  if (Buffer.isBuffer(body)) return [{ name: mediaType === 'application/zip' ? 'upload.zip' : 'upload.xml', data: body, zip: mediaType === 'application/zip' }];
  return (body as ImportRequest).files.map((f): ImportInput => {
    if (f.encoding !== 'base64') {
      const bytes = textFileBytes(f.content);
      return Buffer.isBuffer(bytes) ? { name: f.name, data: bytes } : { name: f.name, rejection: bytes.rejection };
    }
    if (!BASE64_RE.test(f.content)) return { name: f.name, rejection: 'content is not valid base64' };
    return { name: f.name, data: Buffer.from(f.content, 'base64') };
  });
}

/** The body of a raw-bytes operation (lib/http/binary-bodies.ts hands it over as a Buffer). */
function bytesOf(body: unknown): Buffer {
  if (!Buffer.isBuffer(body)) throw new Error('a raw body arrives as bytes');
  return body;
}

export function importsHandlers(deps: HandlerDeps): Pick<HandlerMap, 'importDocuments' | 'importDocumentsXml' | 'importDocumentsZip'> {
  const stoppable = (reply: FastifyReply, run: (signal: AbortSignal) => Promise<ImportReport>) =>
    runUntilStopped(reply, deps.shutdown, (err) => err instanceof ImportAborted, 'the same files', run);
  return {
    async importDocumentsXml(request, reply) {
      return stoppable(reply, (signal) => importDocumentsXml(deps, tenantOf(request), bytesOf(request.body), { signal }));
    },
    async importDocumentsZip(request, reply) {
      return stoppable(reply, (signal) => importDocumentsZip(deps, tenantOf(request), bytesOf(request.body), { signal }));
    },
    async importDocuments(request, reply) {
      const mediaType = String(request.headers['content-type'] ?? '')
        .split(';')[0]!
        .trim()
        .toLowerCase();
      const inputs = inputsOf(request.body, mediaType);
      return runUntilStopped(
        reply,
        deps.shutdown,
        (err) => err instanceof ImportAborted,
        'the same files',
        (signal) =>
          importDocuments(deps, tenantOf(request), inputs, { signal, onFile: (file) => deps.metrics.importedFile(file.kind ?? 'unknown', file.status) }),
      );
    },
  };
}
