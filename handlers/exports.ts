import type { FastifyReply } from 'fastify';
import type { HandlerDeps, HandlerMap } from './types.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { createExport } from '../lib/exports/create-export.ts';
import { getExport } from '../lib/exports/get-export.ts';
import { listExports } from '../lib/exports/list-exports.ts';
import { getExportFile, type ServedExportFile } from '../lib/exports/get-export-file.ts';
import { getSharedExport } from '../lib/exports/get-shared-export.ts';

/** The file streamed from its chunks, under its name. */
const sendFile = (reply: FastifyReply, file: ServedExportFile): FastifyReply =>
  reply
    .type(file.contentType)
    .header('content-length', String(file.size))
    .header('content-disposition', `attachment; filename="${file.fileName}"`)
    .send(file.stream);

type ExportsOperations = 'createExport' | 'listExports' | 'getExport' | 'getExportFile' | 'getSharedExport';

export function exportsHandlers(deps: HandlerDeps): Pick<HandlerMap, ExportsOperations> {
  return {
    async createExport(request, reply) {
      const view = await createExport(deps, tenantOf(request), request.body);
      reply.code(202).header('location', `/api/exports/${view.id}`);
      return view;
    },
    async listExports(request) {
      return listExports(deps, tenantOf(request), request.query);
    },
    async getExport(request) {
      return getExport(deps, tenantOf(request), { id: request.params.id });
    },
    async getExportFile(request, reply) {
      return sendFile(reply, await getExportFile(deps, tenantOf(request), { id: request.params.id }));
    },
    async getSharedExport(request, reply) {
      return sendFile(reply, await getSharedExport(deps, { token: request.params.token }));
    },
  };
}
