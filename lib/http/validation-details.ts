import type { ErrorObject } from 'ajv';
import type { ErrorField } from './api-error.ts';

/**
 * Turns Ajv errors into one readable detail per parameter or body field (its
 * first problem: 'yesterday' fails both the format and the pattern of a date,
 * which is one problem to the client), naming it as the client wrote it.
 */
const PART_NOUN: Record<string, string> = {
  querystring: 'query parameter',
  params: 'path parameter',
  headers: 'header',
  body: 'body field',
};

const fieldName = (path: string): string => path.replace(/^\//, '').replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~');

const FIELD_IN: Record<string, ErrorField['in']> = { querystring: 'query', params: 'path', headers: 'header', body: 'body' };

export interface ValidationProblems {
  details: string[];
  fields: ErrorField[];
}

export function validationProblems(errors: ErrorObject[], part: string): ValidationProblems {
  const noun = PART_NOUN[part] ?? part;
  const where = FIELD_IN[part] ?? 'body';
  const details: string[] = [];
  const fields: ErrorField[] = [];
  const seen = new Set<string>();
  let field = '';
  const push = (d: string) => {
    if (seen.has(`field:${field}`) || seen.has(d)) return;
    seen.add(`field:${field}`);
    seen.add(d);
    details.push(d);
    fields.push({ in: where, name: field, detail: d });
  };
  // A value that matches no alternative of an anyOf is one problem: report the innermost
  // failed anyOf (the value itself), not every alternative's complaint on the way down.
  const anyOf = errors.filter((e) => e.keyword === 'anyOf');
  const innermost = anyOf.filter((a) => !anyOf.some((b) => b !== a && b.instancePath.startsWith(`${a.instancePath}/`)));
  const underAnyOf = (e: ErrorObject) =>
    anyOf.some((a) => e.schemaPath.startsWith(`${a.schemaPath}/`) && (e.instancePath === a.instancePath || e.instancePath.startsWith(`${a.instancePath}/`)));
  for (const e of errors) {
    if (e.keyword === 'anyOf' ? !innermost.includes(e) : underAnyOf(e)) continue;
    const name = fieldName(e.instancePath);
    // The field a problem is about: a missing or unknown property is its own field.
    const property =
      e.keyword === 'required'
        ? (e.params as { missingProperty: string }).missingProperty
        : e.keyword === 'additionalProperties'
          ? (e.params as { additionalProperty: string }).additionalProperty
          : null;
    field = property === null ? name : name ? `${name}.${property}` : String(property);
    const subject = name || (part === 'body' ? 'body' : noun);
    const schema = e.parentSchema as { type?: string; minimum?: number; maximum?: number } | undefined;
    if (e.keyword === 'additionalProperties') {
      const extra = String((e.params as { additionalProperty: string }).additionalProperty);
      push(name ? `${name} has unknown field '${extra}'` : `unknown ${noun} '${extra}'`);
    } else if (e.keyword === 'required') {
      const missing = String((e.params as { missingProperty: string }).missingProperty);
      push(`${name ? `${name}.` : ''}${missing} is required`);
    } else if (
      schema?.type === 'integer' &&
      schema.minimum !== undefined &&
      schema.maximum !== undefined &&
      ['type', 'minimum', 'maximum', 'multipleOf'].includes(e.keyword)
    ) {
      push(`${subject} must be an integer between ${schema.minimum} and ${schema.maximum}`);
    } else if (e.keyword === 'enum') {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
      push(`${subject} must be one of: ${allowed.map(String).join(', ')}`);
    } else if (e.keyword === 'pattern' && typeof (e.parentSchema as { title?: unknown } | undefined)?.title === 'string') {
      // A named form (e.g. CalendarDate) reads better than its regular expression.
      push(`${subject} must be a valid ${(e.parentSchema as { title: string }).title}`);
    } else if (e.keyword === 'format') {
      const format = String((e.params as { format: string }).format);
      const hint = format === 'date' ? ' (YYYY-MM-DD)' : format === 'date-time' ? ' (ISO 8601 date-time)' : '';
      push(`${subject} must be a valid ${format}${hint}`);
    } else if (e.keyword === 'anyOf') {
      const about = (e.parentSchema as { description?: string } | undefined)?.description;
      push(`${subject} matches none of the allowed forms${about ? ` (${about.replace(/\.$/, '')})` : ''}`);
    } else {
      push(`${subject} ${e.message ?? 'is invalid'}`);
    }
  }
  return { details, fields };
}

/** Just the details (one per field). */
export const validationDetails = (errors: ErrorObject[], part: string): string[] => validationProblems(errors, part).details;
