import AjvModule, { type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv and ajv-formats are CommonJS; under NodeNext their default export is the module object.
const Ajv = AjvModule.default;
const addFormats = addFormatsModule.default;
export type AjvInstance = InstanceType<typeof Ajv>;

/** OpenAPI 3.0 annotation keywords that are not JSON Schema. */
const OPENAPI_KEYWORDS = ['example', 'xml', 'externalDocs', 'discriminator', 'x-examples'];

/**
 * The one Ajv configuration of the service. Query strings and path params are
 * strings on the wire, so `coerce` turns "10" into 10 (never arrays into
 * scalars: a repeated parameter is an error). Bodies and responses are JSON and
 * are validated as they are. Nothing is ever stripped (`removeAdditional: false`).
 */
export function createAjv(kind: 'coerce' | 'strict', extra: Options = {}): AjvInstance {
  const ajv = new Ajv({
    allErrors: true,
    coerceTypes: kind === 'coerce',
    useDefaults: true,
    removeAdditional: false,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    // parentSchema on errors lets us phrase details ("limit must be an integer between 1 and 100").
    verbose: true,
    ...extra,
  });
  addFormats(ajv);
  for (const keyword of OPENAPI_KEYWORDS) ajv.addKeyword({ keyword, schemaType: ['string', 'object', 'array', 'number', 'boolean', 'null'] });
  return ajv;
}
