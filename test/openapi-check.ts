import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';

// Checks an answer of the service against the OpenAPI document it serves: the status is documented for
// the operation, every header the service sets that a client reads is documented on that response,
// and the body matches the response's schema. Used by test/docs/openapi-behaviour.test.ts.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

/** Headers a client reads; each one the service sends must be in the document. */
const TRACKED = ['location', 'etag', 'x-total-count', 'link', 'www-authenticate', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'idempotent-replayed', 'x-request-id'];

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export function documentChecker(doc: Json) {
  const ajv = new Ajv2020({ strict: false, validateSchema: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: 'https://music-catalogue.test/openapi.json' });

  return function problems(method: string, template: string, res: LightMyRequestResponse): string[] {
    const operation = doc.paths?.[template]?.[method.toLowerCase()] as Json | undefined;
    if (!operation) return [`${method} ${template} is not in the document`];
    const status = String(res.statusCode);
    const response = operation.responses?.[status] as Json | undefined;
    if (!response) return [`${method} ${template}: status ${status} is not documented (${res.body.slice(0, 120)})`];
    const found: string[] = [];
    const documented = Object.keys(response.headers ?? {}).map((h) => h.toLowerCase());
    for (const header of TRACKED) {
      if (res.headers[header] !== undefined && !documented.includes(header)) found.push(`${method} ${template} ${status}: header ${header} is not documented`);
    }
    const content = response.content?.['application/json'];
    if (!content) {
      if (res.body !== '' && method !== 'HEAD' && !(res.headers['content-type'] ?? '').toString().startsWith('text/plain')) {
        found.push(`${method} ${template} ${status}: a body is sent but none is documented`);
      }
      return found;
    }
    if (method === 'HEAD') return found;
    const ref = `https://music-catalogue.test/openapi.json#/${pointer('paths', template, method.toLowerCase(), 'responses', status, 'content', 'application/json', 'schema')}`;
    const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
    if (!validate(res.json())) found.push(`${method} ${template} ${status}: body does not match: ${ajv.errorsText(validate.errors)}`);
    return found;
  };
}
