import type { HandlerDeps, HandlerMap } from './types.ts';
import { apiVersion, v1Page, withDetail } from './api-version.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { listFinancialDocs, listFinancialDocsV1 } from '../lib/finance/list-financial-docs.ts';
import { getFinancialDoc } from '../lib/finance/get-financial-doc.ts';
import { recordCancellationStatus } from '../lib/finance/record-cancellation-status.ts';

export function financialDocsHandlers(deps: HandlerDeps): Pick<HandlerMap, 'listFinancialDocs' | 'getFinancialDoc' | 'recordCancellationStatus'> {
  return {
    async listFinancialDocs(request, reply) {
      // Version 1 is the earlier bare array of stored records; version 2 states the detail level at the top too.
      if (apiVersion(request, reply, deps.now) === '1') return v1Page(reply, await listFinancialDocsV1(deps, tenantOf(request), request.query));
      return withDetail(await listFinancialDocs(deps, tenantOf(request), request.query));
    },
    async getFinancialDoc(request) {
      return getFinancialDoc(deps, tenantOf(request), { id: request.params.id, detail: request.query.detail });
    },
    async recordCancellationStatus(request) {
      return recordCancellationStatus(deps, tenantOf(request), { id: request.params.id, ...request.body });
    },
  };
}
