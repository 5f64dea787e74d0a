/**
 * MCP resources: the OpenAPI document and the domain notes an agent needs
 * (docs/mcp-domain-notes.md, plus an "Operations" section generated from the
 * spec so every tool's status codes are listed even as operations are added).
 */
import { readFileSync } from 'node:fs';
import { derefDocument, type Json } from '../spec/deref.ts';
import { toolDocsUri, type ToolDefinition } from './tools-from-spec.ts';
import { wholeText } from './brief-text.ts';

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

/** A tool's documented status codes with their whole descriptions, in the spec's order. */
function statusCodes(paths: { [key: string]: Json }, tool: ToolDefinition): [string, string][] {
  const op = tool.operation;
  const item = paths[op.path];
  const operation = isObject(item) ? item[op.method.toLowerCase()] : undefined;
  const responses = isObject(operation) && isObject(operation.responses) ? operation.responses : {};
  return Object.entries(responses).map(([status, res]) => [status, isObject(res) && typeof res.description === 'string' ? wholeText(res.description) : '']);
}

/**
 * Markdown section listing each tool: REST mapping, arguments and documented
 * status codes. A status code that several tools document in the same words
 * (401, 429, 503, ...) is described once, under "Status codes shared by the
 * tools", and each tool names it there; what is a tool's own is under it.
 */
export function operationsSection(spec: Json, tools: ToolDefinition[]): string {
  const doc = derefDocument(spec);
  const paths = isObject(doc) && isObject(doc.paths) ? doc.paths : {};
  const codes = new Map(tools.map((tool) => [tool.name, statusCodes(paths, tool)]));
  const uses = new Map<string, number>();
  for (const list of codes.values()) for (const [status, text] of list) uses.set(`${status} ${text}`, (uses.get(`${status} ${text}`) ?? 0) + 1);
  const shared = (status: string, text: string) => (uses.get(`${status} ${text}`) ?? 0) > 1;
  // A status shared in different words (a 404 for a missing document, another for a foreign cursor) is told apart by a letter.
  const sharedKeys = [...uses.keys()].filter((key) => (uses.get(key) ?? 0) > 1).sort((a, b) => a.localeCompare(b));
  const label = new Map<string, string>();
  for (const key of sharedKeys) {
    const status = key.slice(0, key.indexOf(' '));
    const same = sharedKeys.filter((k) => k.startsWith(`${status} `));
    label.set(key, same.length > 1 ? `${status}${String.fromCharCode(97 + same.indexOf(key))}` : status);
  }
  const lines = ['## Operations (generated from the OpenAPI document)', '', '### Status codes shared by the tools', ''];
  for (const key of sharedKeys) lines.push(`- ${label.get(key)}: ${key.slice(key.indexOf(' ') + 1)}`);
  lines.push('');
  for (const tool of tools) {
    const op = tool.operation;
    const props = Object.keys((tool.inputSchema.properties ?? {}) as object);
    const required = new Set((tool.inputSchema.required as string[] | undefined) ?? []);
    const list = codes.get(tool.name) ?? [];
    const own = list.filter(([status, text]) => !shared(status, text));
    const common = list.filter(([status, text]) => shared(status, text)).map(([status, text]) => label.get(`${status} ${text}`) ?? status);
    lines.push(`### ${tool.name}: ${op.summary}`);
    lines.push(`\`${op.method} ${op.path}\`${tool.annotations.readOnlyHint ? ' (read-only)' : ''}`);
    lines.push(`- Arguments: ${props.length ? props.map((p) => (required.has(p) ? `\`${p}\` (required)` : `\`${p}\``)).join(', ') : 'none'}`);
    if (own.length) {
      lines.push('- Status codes:');
      for (const [status, text] of own) lines.push(`  - ${status}: ${text}`);
    }
    if (common.length) lines.push(`- ${own.length ? 'Also' : 'Status codes'}: ${common.join(', ')} (as shared above)`);
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
