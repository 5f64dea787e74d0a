import type { ErrorObject } from 'ajv';
import type { GeneratedValidator } from '../../generated/validators.js';

/**
 * Ajv's coercion turns a query value such as "1e309" or "Infinity" into Infinity, then skips the
 * integer's minimum and maximum (ajv-validator/ajv#2212; the fix, #2661, is not released):
 * `limit=1e309` was a page size without a bound, every document in one answer. A query, path or
 * header value coerced to a number that is not finite is refused with its type's error, as Ajv
 * refuses the same value given as a number. So is one not written in decimal.
 */
export function refusingNonFiniteNumbers(validate: GeneratedValidator, schema: unknown): GeneratedValidator {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {};
  const wrapped: GeneratedValidator = (data: unknown) => {
    // Ajv's coercion reads text as JavaScript's Number() does: "0x10" as 16, "" and " " as 0. A number in a query,
    // path or header is written in decimal; any other text is refused with its type's error, never read as another.
    const notDecimal = notDecimalNumbers(data, properties);
    const valid = validate(data);
    if (notDecimal.length) {
      // With the other problems of the request: those not about the same parameters.
      const named = new Set(notDecimal.map((e) => e.instancePath));
      wrapped.errors = [...notDecimal, ...(validate.errors ?? []).filter((e) => !named.has(e.instancePath))];
      return false;
    }
    wrapped.errors = validate.errors ?? null;
    if (!valid || typeof data !== 'object' || data === null) return valid;
    const errors: ErrorObject[] = [];
    for (const [name, value] of Object.entries(data)) {
      if (typeof value !== 'number' || Number.isFinite(value)) continue;
      const parentSchema = properties[name] ?? { type: 'number' };
      errors.push(typeError(name, parentSchema, typeof parentSchema.type === 'string' ? parentSchema.type : 'number', value));
    }
    if (!errors.length) return true;
    wrapped.errors = errors;
    return false;
  };
  return wrapped;
}

const DECIMAL = /^[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$/;

function notDecimalNumbers(data: unknown, properties: Record<string, { type?: unknown }>): ErrorObject[] {
  if (typeof data !== 'object' || data === null) return [];
  const errors: ErrorObject[] = [];
  for (const [name, value] of Object.entries(data)) {
    const parentSchema = properties[name];
    const type = parentSchema?.type;
    if ((type !== 'integer' && type !== 'number') || typeof value !== 'string' || DECIMAL.test(value)) continue;
    errors.push(typeError(name, parentSchema!, type, value));
  }
  return errors;
}

/** Ajv's own `type` error for a property, as the request's other problems are reported. */
const typeError = (name: string, parentSchema: { type?: unknown }, type: string, value: unknown): ErrorObject => ({
  instancePath: `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`,
  schemaPath: `#/properties/${name}/type`,
  keyword: 'type',
  params: { type },
  message: `must be ${type}`,
  schema: type,
  parentSchema,
  data: value,
});
