import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS with a default export; under NodeNext it arrives wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

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
