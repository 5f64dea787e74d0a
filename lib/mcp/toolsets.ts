/**
 * Toolsets: a session's catalogue is the tools of the toolsets it asks for, one toolset per spec
 * tag (financial, shipments, tax, analytics, received, imports, originals, exports, alerts, webhooks) plus `settings`
 * (operations marked `x-mcp-toolset: settings`: a tenant's configuration) and `filing` (marked
 * `x-mcp-toolset: filing`: the DIOT and the tax position's line pages), optionally only the
 * read-only ones. The choice travels in the MCP URL (`/mcp?toolsets=tax,analytics&readOnly=true`,
 * the same on `/sse`) because hosted agent clients let a user set a URL, not headers. By default
 * every toolset but `webhooks`, `settings`, `filing`, `originals` and `exports`: configuring endpoints and rules
 * is set-up done once, the DIOT and the position's line pages are month-end filing work (the
 * position itself, getTaxPosition, is in `tax` with its first lines), links to original XML files
 * are handed to people now and then (exports likewise: files for spreadsheets), and leaving them out keeps the default catalogue within what
 * agents can afford to load.
 */
import { invalidQuery } from '../http/api-error.ts';
import type { OperationSchemas } from '../spec/operations.ts';

/** What grouping needs of a tool (tools-from-spec.ts's ToolDefinition has it; no import back, so no cycle). */
interface Groupable {
  operation: OperationSchemas;
  annotations: { readOnlyHint?: boolean };
}

/** The query parameters that select a session's tools. */
export const TOOL_SELECTION_QUERY = ['toolsets', 'readOnly'] as const;
export const DEFAULT_EXCLUDED_TOOLSETS: readonly string[] = ['webhooks', 'settings', 'filing', 'originals', 'exports'];
export const ALL_TOOLSETS = 'all';

export interface ToolSelection {
  /** Toolset names, in the catalogue's order. */
  toolsets: string[];
  /** Only tools that change nothing (GET operations). */
  readOnly: boolean;
}

/** A tool's toolset: the operation's `x-mcp-toolset` (tenant settings: `settings`), else its first tag. */
export const toolsetOf = (tool: Pick<Groupable, 'operation'>): string => {
  const declared = tool.operation.extensions['x-mcp-toolset'];
  return typeof declared === 'string' ? declared : (tool.operation.tags[0] ?? 'other');
};

/** The toolsets of a catalogue, in the order their first tool appears. */
export const toolsetNames = (tools: readonly Pick<Groupable, 'operation'>[]): string[] => [...new Set(tools.map(toolsetOf))];

const text = (value: unknown): string | undefined => (Array.isArray(value) ? value.map(String).join(',') : typeof value === 'string' ? value : undefined);

/** The selection a request's query asks for; 400 `invalid_parameter` naming the valid values otherwise. */
export function parseToolSelection(query: Record<string, unknown> | undefined, tools: readonly Pick<Groupable, 'operation'>[]): ToolSelection {
  const known = toolsetNames(tools);
  const rawToolsets = text(query?.toolsets);
  const rawReadOnly = text(query?.readOnly);
  let toolsets = known.filter((name) => !DEFAULT_EXCLUDED_TOOLSETS.includes(name));
  if (rawToolsets !== undefined) {
    const asked = rawToolsets
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (asked.length === 0) throw invalidQuery('toolsets', `toolsets is empty: name one or more of ${known.join(', ')}, or ${ALL_TOOLSETS}`);
    const unknown = asked.filter((name) => name !== ALL_TOOLSETS && !known.includes(name));
    if (unknown.length > 0)
      throw invalidQuery('toolsets', `toolsets: unknown ${unknown.slice(0, 5).join(', ')}; the toolsets are ${known.join(', ')}, or ${ALL_TOOLSETS}`);
    toolsets = asked.includes(ALL_TOOLSETS) ? known : known.filter((name) => asked.includes(name));
  }
  if (rawReadOnly !== undefined && rawReadOnly !== 'true' && rawReadOnly !== 'false')
    throw invalidQuery('readOnly', `readOnly must be true or false, not "${rawReadOnly.slice(0, 20)}"`);
  return { toolsets, readOnly: rawReadOnly === 'true' };
}

/** The tools a selection keeps, in the catalogue's order. */
export function selectTools<T extends Groupable>(tools: readonly T[], selection: ToolSelection): T[] {
  return tools.filter((tool) => selection.toolsets.includes(toolsetOf(tool)) && (!selection.readOnly || tool.annotations.readOnlyHint === true));
}
