import { listOperations } from './lib/spec/operations.ts';
import { loadSpec } from './lib/app.ts';
for (const op of listOperations(loadSpec())) {
  console.log(op.operationId, op.method, op.route, op.secured, Object.keys(op.responses).join(','), 'Q:', JSON.stringify(Object.fromEntries(Object.entries((op.querystring?.properties ?? {}) as Record<string, any>).map(([k, v]) => [k, v.type + (v.format ? ':' + v.format : '') + (v.enum ? ':' + v.enum.join('|') : '')+(v.pattern? ':/'+v.pattern+'/':'')]))), op.body ? 'BODY' : '', op.extensions['x-no-fastify-config'] ? 'NOGLUE' : '');
}
