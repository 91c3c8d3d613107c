import { Ajv, type FuncKeywordDefinition, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { PLAIN_DECIMAL } from './query/values.js';
import { SerializerSelector, type SerializerFactory } from '@fastify/fast-json-stringify-compiler';

// ajv-formats is CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/**
 * `x-trim: true` on a string (see NameString): the value is stored trimmed and in Unicode NFC (one
 * text, one value: e + U+0301 is stored as é; src/db/collation.ts). It runs after the length rules,
 * so they count the value as sent, exactly what the OpenAPI document's `maxLength` says (a
 * validating proxy and the service agree: 200 characters plus spaces around them is too long).
 * A blank value is left as sent: it fails once, as "Must not be blank." (the pattern).
 */
const TRIM_KEYWORD: FuncKeywordDefinition = {
  keyword: 'x-trim',
  type: 'string',
  schemaType: 'boolean',
  modifying: true,
  errors: false,
  validate: (enabled: boolean, data: string, _parentSchema, cxt) => {
    if (!enabled || !cxt?.parentData) return true;
    const trimmed = data.trim();
    if (trimmed === '') return true;
    const stored = trimmed.normalize('NFC');
    if (stored !== data) (cxt.parentData as Record<string | number, unknown>)[cxt.parentDataProperty] = stored;
    return true;
  },
};

export function makeAjv(coerceTypes: Options['coerceTypes']): Ajv {
  const ajv = new Ajv({
    allErrors: true, // every failing field is reported, not only the first
    coerceTypes, // bodies are JSON and keep their types; path and query values arrive as text
    useDefaults: true,
    removeAdditional: false, // unknown fields are rejected, never silently dropped
    strict: false,
    verbose: true, // errors carry their schema, for our x-error-message texts
    // Our schemas are not checked against the JSON Schema meta-schema when compiled: they are the
    // code's own, compiled by the tests and linted as OpenAPI (npm run lint:api). The check compiled
    // that meta-schema on the first request, a worker's first /ready: about 50 ms of start to ready.
    validateSchema: false,
  });
  addFormats(ajv);
  ajv.addKeyword(TRIM_KEYWORD);
  return ajv;
}

/**
 * A validator compiled on its first call, not at start: compiling every route's schemas is most of
 * the start-up time, and a route's first request pays its own (a millisecond or two) instead.
 * Fastify reads `errors` off the function it was given, so the wrapper carries them over.
 */
function lazily(compile: () => ReturnType<Ajv['compile']>): ReturnType<Ajv['compile']> {
  let real: ReturnType<Ajv['compile']> | undefined;
  const validate = ((data: unknown) => {
    real ??= compile();
    const ok = real(data);
    validate.errors = real.errors;
    return ok;
  }) as ReturnType<Ajv['compile']>;
  return validate;
}

/** Request validation: bodies are never coerced ("2001" is not a year); params and query strings are. */
export function makeValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const forBody = makeAjv(false);
  const forText = makeAjv('array');
  // Many routes share a schema (the same params, the same body): compile each distinct one once,
  // which is most of the start-up time otherwise.
  const compiled = new Map<string, ReturnType<Ajv['compile']>>();
  return ({ schema, httpPart }) => {
    // Collection lists read their raw query string through src/query, which reports every bad parameter.
    if (httpPart === 'querystring' && (schema as Record<string, unknown>)['x-raw-query'] === true) return () => true;
    // Bulk bodies (http/bulk.ts): one item or an array, each form checked by its own schema.
    const bulk = bulkForms(schema);
    if (bulk) {
      const [one, many] = bulk.map((form) => lazily(() => forBody.compile(form)));
      const pick = ((data: unknown) => {
        const validate = Array.isArray(data) ? many! : one!;
        const ok = validate(data);
        pick.errors = validate.errors;
        return ok;
      }) as ReturnType<Ajv['compile']>;
      return pick;
    }
    const body = httpPart === 'body';
    const key = `${body ? 'body' : 'text'}:${JSON.stringify(schema)}`;
    let validate = compiled.get(key);
    if (!validate) {
      validate = lazily(() => (body ? forBody : forText).compile(schema as object));
      if (httpPart === 'params' || httpPart === 'querystring') validate = plainDecimalIntegers(schema as ObjectSchema, validate);
      compiled.set(key, validate);
    }
    return validate;
  };
}

type ObjectSchema = { properties?: Record<string, { type?: unknown }> };
type Validate = ReturnType<Ajv['compile']>;

/**
 * Integer path and query parameters (ids, `/events`' after and size, ...) must be written in plain
 * decimal. Ajv's coercion takes whatever `Number()` takes, so `0x10`, `1e2`, `+1`, `1.0`, `01` and ` 1`
 * would otherwise all address a row or size a page. The raw text is checked before Ajv coerces it; a
 * failure is a `type` detail naming the parameter. (Collection lists read their raw query through
 * src/query, whose reader applies the same PLAIN_DECIMAL.)
 */
function plainDecimalIntegers(schema: ObjectSchema, validate: Validate): Validate {
  const integers = Object.entries(schema.properties ?? {})
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name);
  if (integers.length === 0) return validate;
  const checked = ((data: Record<string, unknown>) => {
    const bad = integers.filter((name) => typeof data?.[name] === 'string' && !PLAIN_DECIMAL.test(data[name]));
    const ok = validate(data);
    if (bad.length === 0) {
      checked.errors = validate.errors;
      return ok;
    }
    const others = (validate.errors ?? []).filter((e) => !bad.some((name) => e.instancePath === `/${name}`));
    checked.errors = [
      ...bad.map((name) => ({
        keyword: 'type',
        instancePath: `/${name}`,
        schemaPath: `#/properties/${name}/type`,
        params: { type: 'integer' },
        message: 'must be integer',
      })),
      ...others,
    ];
    return false;
  }) as Validate;
  return checked;
}

/** The one-item and array forms of a bulk schema (http/bulk.ts), or undefined. */
function bulkForms(schema: unknown): [object, object] | undefined {
  const s = schema as { 'x-bulk'?: boolean; anyOf?: object[] } | undefined;
  return s?.['x-bulk'] && s.anyOf?.length === 2 ? [s.anyOf[0]!, s.anyOf[1]!] : undefined;
}

/**
 * Keywords that only say which values are valid: fast-json-stringify writes the same JSON with or
 * without them. `format` is one of them except where fast-json-stringify writes by it (a Date as
 * date-time, date or time; `unsafe` strings): SERIALISING_FORMATS.
 */
const VALIDATION_ONLY = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'enum',
  'minItems',
  'maxItems',
  'uniqueItems',
  'contains',
  'minContains',
  'maxContains',
  'minProperties',
  'maxProperties',
  'propertyNames',
]);
const SERIALISING_FORMATS = new Set(['date-time', 'date', 'time', 'unsafe']);
/** Keywords whose value maps names (a property's, a definition's) to schemas: the names are data. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);
/** Keywords whose value is a schema or a list of schemas. */
const SUBSCHEMAS = new Set(['items', 'prefixItems', 'additionalItems', 'additionalProperties', 'anyOf', 'oneOf', 'allOf', 'not', 'if', 'then', 'else']);

/**
 * The schema an answer is serialised with, derived from the one the document shows (docs/stored-data.md):
 * the same types, properties, required lists, consts and unions, without the keywords that only
 * validate. The document states what the API writes (a user's age 0..150, a status of the enum, an id
 * within int4); a row written outside the API (psql, sqlite3) may hold another value, and is answered
 * as stored. fast-json-stringify checks a value against a union's branches to choose one (the fields
 * plugin's anyOf [full, relaxed] on every GET answer), and with the write rules kept it would find
 * none for such a row: a 500. Derived here, once per schema, so no second schema is kept by hand.
 */
export function answerSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(answerSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (VALIDATION_ONLY.has(key)) continue;
    if (key === 'format' && !SERIALISING_FORMATS.has(value as string)) continue;
    if (SCHEMA_MAPS.has(key) && value && typeof value === 'object' && !Array.isArray(value)) {
      out[key] = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, sub]) => [name, answerSchema(sub)]));
    } else out[key] = SUBSCHEMAS.has(key) ? answerSchema(value) : value;
  }
  return out;
}

/**
 * Response serializers, one per distinct schema: every route declares the same error responses
 * (a reference to ErrorBody), and fast-json-stringify would otherwise build (and first validate) a
 * serializer for each route and status anew. Each is built from the answer schema (answerSchema) of
 * the route's and of the shared schemas, once.
 */
export function sharedSerializers(): { buildSerializer: SerializerFactory } {
  const defaults = SerializerSelector();
  return {
    buildSerializer(externalSchemas, options) {
      const shared = Object.fromEntries(Object.entries(externalSchemas ?? {}).map(([id, schema]) => [id, answerSchema(schema)]));
      const build = defaults(shared, options);
      const compile: typeof build = (route) => build({ ...route, schema: answerSchema(route.schema) });
      const built = new Map<string, ReturnType<typeof compile>>();
      return (route) => {
        const key = JSON.stringify(route.schema);
        let serialize = built.get(key);
        if (!serialize) {
          const bulk = bulkForms(route.schema);
          if (bulk) {
            let one: ReturnType<typeof compile> | undefined;
            let many: ReturnType<typeof compile> | undefined;
            serialize = (data: unknown) =>
              Array.isArray(data) ? (many ??= compile({ ...route, schema: bulk[1] }))(data) : (one ??= compile({ ...route, schema: bulk[0] }))(data);
          } else {
            let real: ReturnType<typeof compile> | undefined;
            const served = servedBranchOf(route.schema);
            serialize = (data: unknown) => (real ??= compile(served ? { ...route, schema: served } : route))(data);
          }
          built.set(key, serialize);
        }
        return serialize;
      };
    },
  };
}

/**
 * Response schemas that are a union of a representation and forms of it only a request option asks
 * for (fields.plugin.ts: the full schema | every property optional), with the branch every answer
 * serialised by the route's own serializer has: the other forms install their own serializer. The
 * serializer is compiled from that branch (sharedSerializers, above): the union's serializer
 * first validates the whole answer against each branch (ajv) to choose one, on every response.
 */
const servedBranches = new WeakMap<object, TSchema>();

export function servedBy(union: TSchema, branch: TSchema): TSchema {
  servedBranches.set(union, branch);
  return union;
}

export function servedBranchOf(schema: unknown): TSchema | undefined {
  return typeof schema === 'object' && schema !== null ? servedBranches.get(schema) : undefined;
}
