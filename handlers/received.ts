import type { HandlerDeps, HandlerMap } from './types.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { listReceivedDocs } from '../lib/received/list-received-docs.ts';
import { getReceivedDoc } from '../lib/received/get-received-doc.ts';
import { getReceivedCategoryRules } from '../lib/received/get-received-category-rules.ts';
import { setReceivedCategoryRules } from '../lib/received/set-received-category-rules.ts';

export function receivedHandlers(
  deps: HandlerDeps,
): Pick<HandlerMap, 'listReceivedDocs' | 'getReceivedDoc' | 'getReceivedCategoryRules' | 'setReceivedCategoryRules'> {
  return {
    async listReceivedDocs(request) {
      return listReceivedDocs(deps, tenantOf(request), request.query);
    },
    async getReceivedDoc(request) {
      return getReceivedDoc(deps, tenantOf(request), { id: request.params.id });
    },
    async getReceivedCategoryRules(request) {
      return getReceivedCategoryRules(deps, tenantOf(request));
    },
    async setReceivedCategoryRules(request) {
      return setReceivedCategoryRules(deps, tenantOf(request), request.body);
    },
  };
}
