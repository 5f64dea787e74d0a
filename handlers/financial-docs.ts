import type { HandlerDeps, HandlerMap, ValidatedQuery } from './types.ts';
import { apiVersion } from './api-version.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { listFinancialDocs } from '../lib/finance/list-financial-docs.ts';
import { getFinancialDoc } from '../lib/finance/get-financial-doc.ts';

export function financialDocsHandlers(deps: HandlerDeps): Pick<HandlerMap, 'listFinancialDocs' | 'getFinancialDoc'> {
  return {
    async listFinancialDocs(request, reply) {
      const query = request.query as ValidatedQuery<'listFinancialDocs', 'page' | 'limit' | 'detail'>;
      // Version 1 is the earlier bare array of stored documents.
      const legacy = apiVersion(request, reply) === '1';
      const page = await listFinancialDocs(deps, tenantOf(request), { ...query, detail: legacy ? 'full' : query.detail });
      return legacy ? page.data : page;
    },
    async getFinancialDoc(request) {
      const query = request.query as ValidatedQuery<'getFinancialDoc', 'detail'>;
      return getFinancialDoc(deps, tenantOf(request), { id: request.params.id, detail: query.detail });
    },
  };
}
