/**
 * MCP resources: the OpenAPI document and the domain notes an agent needs
 * (docs/mcp-domain-notes.md, plus an "Operations" section generated from the
 * spec so every tool's status codes are listed even as operations are added).
 */
import { readFileSync } from 'node:fs';
import { deref, type Json } from '../spec/deref.ts';
import type { ToolDefinition } from './tools-from-spec.ts';

export const OPENAPI_URI = 'freight://openapi.json';
export const DOMAIN_NOTES_URI = 'freight://docs/domain-notes.md';
const NOTES_PATH = new URL('../../docs/mcp-domain-notes.md', import.meta.url);

export interface McpResource {
  name: string;
  uri: string;
  title: string;
  description: string;
  mimeType: string;
  text: string;
}

const isObject = (v: Json | undefined): v is { [key: string]: Json } => typeof v === 'object' && v !== null && !Array.isArray(v);
const firstSentence = (text: string): string => {
  const flat = text.replace(/\s+/g, ' ').trim();
  const m = /^(.+?[.!?])(\s|$)/.exec(flat);
  return m?.[1] ?? flat;
};

/** Markdown section listing each tool: REST mapping, arguments and documented status codes. */
export function operationsSection(spec: Json, tools: ToolDefinition[]): string {
  const doc = deref(spec);
  const paths = isObject(doc) && isObject(doc.paths) ? doc.paths : {};
  const lines = ['## Operations (generated from the OpenAPI document)', ''];
  for (const tool of tools) {
    const op = tool.operation;
    const item = paths[op.path];
    const spec = isObject(item) ? item[op.method.toLowerCase()] : undefined;
    const responses = isObject(spec) && isObject(spec.responses) ? spec.responses : {};
    const props = Object.keys((tool.inputSchema.properties ?? {}) as object);
    const required = new Set((tool.inputSchema.required as string[] | undefined) ?? []);
    lines.push(`### ${tool.name}: ${op.summary}`);
    lines.push(`\`${op.method} ${op.path}\`${tool.annotations.readOnlyHint ? ' (read-only)' : ''}`);
    lines.push(`- Arguments: ${props.length ? props.map((p) => (required.has(p) ? `\`${p}\` (required)` : `\`${p}\``)).join(', ') : 'none'}`);
    lines.push('- Status codes:');
    for (const [status, res] of Object.entries(responses)) {
      const description = isObject(res) && typeof res.description === 'string' ? firstSentence(res.description) : '';
      lines.push(`  - ${status}: ${description}`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

export function buildResources(spec: Json, tools: ToolDefinition[]): McpResource[] {
  const notes = readFileSync(NOTES_PATH, 'utf8').trimEnd();
  return [
    {
      name: 'openapi',
      uri: OPENAPI_URI,
      title: 'OpenAPI document',
      description: 'The full contract of the REST API the tools execute: parameters, schemas, status codes, examples.',
      mimeType: 'application/json',
      text: JSON.stringify(spec, null, 2),
    },
    {
      name: 'domain-notes',
      uri: DOMAIN_NOTES_URI,
      title: 'Domain notes for agents',
      description: 'How tools map to REST, what each status code means, how to read CFDI documents and trips, and what each audit computes.',
      mimeType: 'text/markdown',
      text: `${notes}\n\n${operationsSection(spec, tools)}`,
    },
  ];
}
