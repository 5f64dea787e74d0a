import type { FastifyReply } from 'fastify';
import type { HandlerDeps, HandlerMap } from './types.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { getCfdiOriginal } from '../lib/originals/get-cfdi-original.ts';
import { createCfdiOriginalLink } from '../lib/originals/create-cfdi-original-link.ts';
import { getSharedCfdiOriginal } from '../lib/originals/get-shared-cfdi-original.ts';
import { getCfdiPrintedForm } from '../lib/originals/get-cfdi-printed-form.ts';
import { createCfdiPrintedFormLink } from '../lib/originals/create-cfdi-printed-form-link.ts';
import { getSharedCfdiPrintedForm } from '../lib/originals/get-shared-cfdi-printed-form.ts';
import type { ServedOriginal } from '../lib/originals/served-original.ts';
import type { ServedPrintedForm } from '../lib/originals/printed-form.ts';

/** The file as kept: no charset added (the XML declaration says its encoding), downloaded under its UUID. */
const sendXml = (reply: FastifyReply, file: ServedOriginal): FastifyReply =>
  reply.type('application/xml').header('content-disposition', `attachment; filename="${file.fileName}"`).send(file.bytes);
const sendPdf = (reply: FastifyReply, file: ServedPrintedForm): FastifyReply =>
  reply.type('application/pdf').header('content-disposition', `attachment; filename="${file.fileName}"`).send(file.bytes);

type OriginalsOperations =
  'getCfdiOriginal' | 'createCfdiOriginalLink' | 'getSharedCfdiOriginal' | 'getCfdiPrintedForm' | 'createCfdiPrintedFormLink' | 'getSharedCfdiPrintedForm';

export function originalsHandlers(deps: HandlerDeps): Pick<HandlerMap, OriginalsOperations> {
  return {
    async getCfdiOriginal(request, reply) {
      return sendXml(reply, await getCfdiOriginal(deps, tenantOf(request), { uuid: request.params.uuid }));
    },
    async createCfdiOriginalLink(request, reply) {
      const link = await createCfdiOriginalLink(deps, tenantOf(request), { uuid: request.params.uuid, expiresIn: request.query.expiresIn });
      reply.code(201);
      return link;
    },
    async getSharedCfdiOriginal(request, reply) {
      return sendXml(reply, await getSharedCfdiOriginal(deps, { token: request.params.token }));
    },
    async getCfdiPrintedForm(request, reply) {
      return sendPdf(reply, await getCfdiPrintedForm(deps, tenantOf(request), { uuid: request.params.uuid }));
    },
    async createCfdiPrintedFormLink(request, reply) {
      const link = await createCfdiPrintedFormLink(deps, tenantOf(request), { uuid: request.params.uuid, expiresIn: request.query.expiresIn });
      reply.code(201);
      return link;
    },
    async getSharedCfdiPrintedForm(request, reply) {
      return sendPdf(reply, await getSharedCfdiPrintedForm(deps, { token: request.params.token }));
    },
  };
}
