import type { HandlerDeps, HandlerMap } from './types.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { listReceivedDocs } from '../lib/received/list-received-docs.ts';
import { getReceivedDoc } from '../lib/received/get-received-doc.ts';
import { getReceivedCategoryRules } from '../lib/received/get-received-category-rules.ts';
import { setReceivedCategoryRules } from '../lib/received/set-received-category-rules.ts';
import { assignReceivedDoc } from '../lib/received/assign-received-doc.ts';
import { unassignReceivedDoc } from '../lib/received/unassign-received-doc.ts';
import { assignReceivedDocs } from '../lib/received/assign-received-docs.ts';
import { assignReceivedDocsCsv } from '../lib/received/assign-received-docs-csv.ts';

export function receivedHandlers(
  deps: HandlerDeps,
): Pick<
  HandlerMap,
  | 'listReceivedDocs'
  | 'getReceivedDoc'
  | 'getReceivedCategoryRules'
  | 'setReceivedCategoryRules'
  | 'assignReceivedDoc'
  | 'unassignReceivedDoc'
  | 'assignReceivedDocs'
  | 'assignReceivedDocsCsv'
> {
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
    async assignReceivedDoc(request) {
      return assignReceivedDoc(deps, tenantOf(request), { id: request.params.id, body: request.body });
    },
    async unassignReceivedDoc(request) {
      return unassignReceivedDoc(deps, tenantOf(request), { id: request.params.id });
    },
    async assignReceivedDocs(request) {
      // text/csv arrives as bytes (lib/http/binary-bodies.ts), JSON as its validated rows.
      const body: unknown = request.body;
      return assignReceivedDocs(deps, tenantOf(request), Buffer.isBuffer(body) ? { csv: body } : { rows: request.body.rows });
    },
    async assignReceivedDocsCsv(request) {
      // text/csv arrives as bytes (lib/http/binary-bodies.ts).
      const body: unknown = request.body;
      if (!Buffer.isBuffer(body)) throw new Error('a CSV body arrives as bytes');
      return assignReceivedDocsCsv(deps, tenantOf(request), body);
    },
  };
}
