import type { HandlerDeps, HandlerMap } from './types.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { ApiError } from '../lib/http/api-error.ts';
import { ImportAborted, importDocuments } from '../lib/imports/import-documents.ts';
import type { ImportInput } from '../lib/imports/import-sources.ts';
import type { components } from '../generated/api.d.ts';

type ImportRequest = components['schemas']['ImportRequest'];

const BASE64_RE = /^[A-Za-z0-9+/\r\n]*={0,2}\s*$/;

/** The request body as import inputs: raw XML or zip bytes, or the files of a JSON body. */
function inputsOf(body: unknown, mediaType: string): ImportInput[] {
  if (Buffer.isBuffer(body)) return [{ name: mediaType === 'application/zip' ? 'upload.zip' : 'upload.xml', data: body, zip: mediaType === 'application/zip' }];
  return (body as ImportRequest).files.map((f): ImportInput => {
    if (f.encoding !== 'base64') return { name: f.name, data: Buffer.from(f.content, 'utf8') };
    if (!BASE64_RE.test(f.content)) return { name: f.name, rejection: 'content is not valid base64' };
    return { name: f.name, data: Buffer.from(f.content, 'base64') };
  });
}

export function importsHandlers(deps: HandlerDeps): Pick<HandlerMap, 'importDocuments'> {
  return {
    async importDocuments(request, reply) {
      const mediaType = String(request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      const inputs = inputsOf(request.body, mediaType);
      // The import deadline (IMPORT_TIMEOUT_MS) answers 503, or the client leaves, or the service
      // starts closing (Ctrl-C, SIGTERM): stop between batches of files.
      const stop = new AbortController();
      reply.raw.once('close', () => stop.abort());
      const onShutdown = () => stop.abort();
      deps.shutdown.addEventListener('abort', onShutdown, { once: true });
      try {
        return await importDocuments(deps, tenantOf(request), inputs, { signal: stop.signal });
      } catch (err) {
        if (!(err instanceof ImportAborted)) throw err;
        if (deps.shutdown.aborted && !reply.sent && !reply.raw.destroyed) {
          reply.header('retry-after', '5');
          throw new ApiError(503, 'Service Unavailable', ['the service is shutting down: the files imported so far are stored whole; send the same files again to complete the import'], { reason: 'shutting_down' });
        }
        // The 503 is already sent (or nobody is listening any more).
        if (!reply.sent) reply.raw.destroy();
        return reply;
      } finally {
        deps.shutdown.removeEventListener('abort', onShutdown);
      }
    },
  };
}
