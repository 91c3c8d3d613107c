import { Ajv, type FuncKeywordDefinition, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

/**
 * `x-trim: true` on a string (see NameString): the value is trimmed before the length rules run, so
 * they count what is stored (names are stored trimmed) and a 200-character name sent with spaces
 * around it is accepted. Ajv runs it first among the string rules (`before: 'maxLength'`) and
 * re-reads the value after it (`modifying`). A blank value is left as sent: it then fails once, as
 * "Must not be blank." (the pattern), rather than also as too short.
 */
const TRIM_KEYWORD: FuncKeywordDefinition = {
  keyword: 'x-trim',
  type: 'string',
  schemaType: 'boolean',
  modifying: true,
  before: 'maxLength',
  errors: false,
  validate: (enabled: boolean, data: string, _parentSchema, cxt) => {
    if (!enabled || !cxt?.parentData) return true;
    const trimmed = data.trim();
    if (trimmed !== '' && trimmed !== data) (cxt.parentData as Record<string | number, unknown>)[cxt.parentDataProperty] = trimmed;
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
  });
  addFormats(ajv);
  ajv.addKeyword(TRIM_KEYWORD);
  return ajv;
}

/** Request validation: bodies are never coerced ("2001" is not a year); params and query strings are. */
export function makeValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const forBody = makeAjv(false);
  const forText = makeAjv('array');
  return ({ schema, httpPart }) => {
    // Collection lists read their raw query string through src/query, which reports every bad parameter.
    if (httpPart === 'querystring' && (schema as Record<string, unknown>)['x-raw-query'] === true) return () => true;
    return (httpPart === 'body' ? forBody : forText).compile(schema as object);
  };
}
