/**
 * MCP resources: the OpenAPI document and the domain notes an agent needs
 * (docs/mcp-domain-notes.md, plus an "Operations" section generated from the
 * spec so every tool's status codes are listed even as operations are added).
 */
import { readFileSync } from 'node:fs';
import { deref, type Json } from '../spec/deref.ts';
import { toolDocsUri, type ToolDefinition } from './tools-from-spec.ts';
import { firstSentence } from './brief-text.ts';

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

/** A parameter's (or body field's) full description, as the spec states it. */
const fullDescription = (schema: Json | undefined): string => (isObject(schema) && typeof schema.description === 'string' ? schema.description.trim() : '');

/**
 * The full reference of one tool, from the spec: what the catalogue's one
 * paragraph leaves out (rules, formulas, formats), every argument's whole
 * description and the body's fields.
 */
export function toolReference(tool: ToolDefinition): string {
  const op = tool.operation;
  const lines = [
    `# ${tool.name}: ${op.summary}`,
    '',
    `\`${op.method} ${op.path}\`${tool.annotations.readOnlyHint ? ' (read-only)' : ''}`,
    '',
    op.description.trim(),
    '',
    '## Arguments',
    '',
  ];
  const parts: [string, JsonSchemaLike | undefined][] = [
    ['path', op.params],
    ['query', op.querystring],
    ['header', op.headers],
  ];
  for (const [where, part] of parts) {
    for (const [name, schema] of Object.entries(isObject(part?.properties) ? part.properties : {})) {
      if (!tool.locations.has(op.headerNames[name] ?? name)) continue;
      lines.push(`- \`${op.headerNames[name] ?? name}\` (${where}): ${fullDescription(schema)}`);
    }
  }
  if (op.body) {
    lines.push(`- \`body\`: ${fullDescription(op.body)}`);
    for (const [name, schema] of Object.entries(isObject(op.body.properties) ? op.body.properties : {}))
      lines.push(`  - \`${name}\`: ${fullDescription(schema)}`);
  }
  return lines.join('\n').replace(/\n{3,}/g, '\n\n');
}

type JsonSchemaLike = { [key: string]: Json };

export function buildResources(spec: Json, tools: ToolDefinition[]): McpResource[] {
  const notes = readFileSync(NOTES_PATH, 'utf8').trimEnd();
  const references = tools.map((tool) => ({
    name: `tool-${tool.name}`,
    uri: toolDocsUri(tool.name),
    title: `${tool.name}: full reference`,
    description: `Everything the ${tool.name} tool's one paragraph leaves out: its rules, formulas and formats, each argument's whole description.`,
    mimeType: 'text/markdown',
    text: toolReference(tool),
  }));
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
    ...references,
  ];
}
