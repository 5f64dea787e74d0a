/**
 * Step-up at the HTTP level (the MCP authorization spec 2025-11-25, "Scope Challenge Handling"): a
 * `tools/call` whose tool needs a scope the credential lacks (a `read` token or read-only key calling
 * a write tool) is answered `403` with `WWW-Authenticate: Bearer error="insufficient_scope",
 * scope=…, resource_metadata=…` before it reaches the session, so an OAuth client can ask the
 * carrier for the scope and retry (RFC 6750 §3.1). A tool needs what its REST operation needs:
 * `read` for a GET, `write` otherwise (handlers/api.ts).
 */
import { API_SCOPES, type ApiScope } from '../auth/api-key-record.ts';
import type { ToolDefinition } from './tools-from-spec.ts';

/** The scope a tool's REST operation requires. */
export const toolScope = (tool: Pick<ToolDefinition, 'operation'>): ApiScope => (tool.operation.method === 'GET' ? 'read' : 'write');

/** A `tools/call` of the message (or batch) that the scopes held do not cover. */
export interface UncoveredCall {
  /** The JSON-RPC id of the request. */
  id: string | number | null;
  tool: string;
  scope: ApiScope;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function uncoveredCalls(body: unknown, tools: ReadonlyMap<string, ToolDefinition>, held: readonly ApiScope[]): UncoveredCall[] {
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  const out: UncoveredCall[] = [];
  for (const m of messages) {
    if (!isRecord(m) || m.method !== 'tools/call' || !isRecord(m.params) || typeof m.params.name !== 'string') continue;
    const tool = tools.get(m.params.name);
    if (!tool) continue;
    const scope = toolScope(tool);
    if (held.includes(scope)) continue;
    const id = typeof m.id === 'string' || typeof m.id === 'number' ? m.id : null;
    out.push({ id, tool: tool.name, scope });
  }
  return out;
}

/**
 * The challenge: `scope` is what the credential holds plus what the call needs (the spec's
 * recommended approach, so stepping up never loses a scope already granted).
 */
export function insufficientScopeChallenge(calls: readonly UncoveredCall[], held: readonly ApiScope[], resourceMetadata?: string): string {
  const needed = new Set<ApiScope>([...held, ...calls.map((c) => c.scope)]);
  const scope = API_SCOPES.filter((s) => needed.has(s)).join(' ');
  return [
    'Bearer realm="freight"',
    'error="insufficient_scope"',
    `scope="${scope}"`,
    ...(resourceMetadata ? [`resource_metadata="${resourceMetadata}"`] : []),
    `error_description="${insufficientScopeDetail(calls)}"`,
  ].join(', ');
}

/** What a refused call is told (no quotes or backslashes: it also goes in a quoted header parameter). */
export function insufficientScopeDetail(calls: readonly UncoveredCall[]): string {
  const scopes = [...new Set(calls.map((c) => c.scope))];
  const tools = [...new Set(calls.map((c) => c.tool))];
  return `${tools.join(', ')} needs the ${scopes.map((s) => `'${s}'`).join(' and ')} scope, which this credential lacks: authorize again with it, or use a key that has it`;
}
