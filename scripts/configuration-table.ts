/**
 * The table of environment variables in docs/configuration.md, rendered from the configuration
 * schema (lib/config-schema.ts): one row per variable, in the schema's order, with its type and
 * bounds or allowed values, its default and its description. scripts/generate.ts writes it between
 * the marker comments (`npm run generate`) and fails `npm run check:generated` when it is stale.
 */
import { CONFIG_SCHEMA } from '../lib/config-schema.ts';

export const CONFIGURATION_DOC = 'docs/configuration.md';
export const TABLE_START = '<!-- configuration-table:start (generated from lib/config-schema.ts by `npm run generate`: edit the schema, not this table) -->';
export const TABLE_END = '<!-- configuration-table:end -->';

interface VariableSchema {
  type: 'integer' | 'boolean' | 'string';
  minimum?: number;
  maximum?: number;
  enum?: readonly string[];
  default?: string | number | boolean;
  'x-default'?: string;
  description: string;
}

/** A table cell: no line breaks, pipes escaped. */
const cell = (text: string) => text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');

function typeOf(schema: VariableSchema): string {
  if (schema.type === 'integer') return `integer ${schema.minimum}–${schema.maximum}`;
  if (schema.enum) return schema.enum.map((v) => `\`${v}\``).join(', ');
  return schema.type;
}

function defaultOf(schema: VariableSchema): string {
  if (schema['x-default'] !== undefined) return schema['x-default'];
  if (schema.default === undefined) return 'unset';
  return `\`${String(schema.default)}\``;
}

export function renderConfigurationTable(): string {
  const rows = Object.entries(CONFIG_SCHEMA.properties as Record<string, VariableSchema>).map(
    ([name, schema]) => `| \`${name}\` | ${cell(typeOf(schema))} | ${cell(defaultOf(schema))} | ${cell(schema.description)} |`,
  );
  return ['| Variable | Type | Default | Meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** `doc` with the text between its markers replaced by the table; throws when a marker is missing. */
export function withConfigurationTable(doc: string): string {
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`${CONFIGURATION_DOC}: the markers ${TABLE_START} and ${TABLE_END} are missing or out of order`);
  return `${doc.slice(0, start + TABLE_START.length)}\n${renderConfigurationTable()}\n${doc.slice(end)}`;
}
