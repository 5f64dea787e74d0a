import type { ErrorObject } from 'ajv';
import type { GeneratedValidator } from '../../generated/validators.js';

/**
 * Ajv's coercion turns a query value such as "1e309" or "Infinity" into Infinity, then skips the
 * integer's minimum and maximum (ajv-validator/ajv#2212; the fix, #2661, is not released):
 * `limit=1e309` was a page size without a bound, every document in one answer. A query, path or
 * header value coerced to a number that is not finite is refused with its type's error, as Ajv
 * refuses the same value given as a number.
 */
export function refusingNonFiniteNumbers(validate: GeneratedValidator, schema: unknown): GeneratedValidator {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties ?? {};
  const wrapped: GeneratedValidator = (data: unknown) => {
    const valid = validate(data);
    wrapped.errors = validate.errors ?? null;
    if (!valid || typeof data !== 'object' || data === null) return valid;
    const errors: ErrorObject[] = [];
    for (const [name, value] of Object.entries(data)) {
      if (typeof value !== 'number' || Number.isFinite(value)) continue;
      const parentSchema = properties[name] ?? { type: 'number' };
      const type = typeof parentSchema.type === 'string' ? parentSchema.type : 'number';
      errors.push({
        instancePath: `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`,
        schemaPath: `#/properties/${name}/type`,
        keyword: 'type',
        params: { type },
        message: `must be ${type}`,
        schema: type,
        parentSchema,
        data: value,
      });
    }
    if (!errors.length) return true;
    wrapped.errors = errors;
    return false;
  };
  return wrapped;
}
