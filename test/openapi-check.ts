import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';

// Checks an answer of the service against the OpenAPI document it serves: the status is documented for
// the operation, every header the service sets that a client reads is documented on that response,
// and the body matches the response's schema. Used by test/docs/openapi-behaviour.test.ts.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => Ajv2020;

/** Headers a client reads; each one the service sends must be in the document. */
const TRACKED = [
  'location',
  'etag',
  'x-total-count',
  'link',
  'www-authenticate',
  'retry-after',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'idempotent-replayed',
  'x-request-id',
];

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

/** The documented path template a concrete path falls under (literal segments win over parameters), if any. */
export function templateOf(doc: Json, path: string): string | undefined {
  let best: { template: string; params: number } | undefined;
  for (const template of Object.keys(doc.paths ?? {})) {
    const source = template
      .split('/')
      .map((segment) => (/^\{.+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    if (!new RegExp(`^${source}$`).test(path)) continue;
    const params = (template.match(/\{/g) ?? []).length;
    if (!best || params < best.params) best = { template, params };
  }
  return best?.template;
}

const checkers = new WeakMap<object, ReturnType<typeof documentChecker>>();

/**
 * Problems of one answer the app gave, against the document the app serves; none when the path or
 * the method is not one the document describes (404 "Route not found.", 405: no operation to check).
 */
export function answerProblems(app: { swagger(): unknown }, method: string, url: string, res: LightMyRequestResponse): string[] {
  const doc = app.swagger() as Json;
  let check = checkers.get(doc);
  if (!check) {
    check = documentChecker(doc);
    checkers.set(doc, check);
  }
  const path = url.split('?')[0] ?? url;
  const template = templateOf(doc, path);
  // `/__...` routes are fixtures some tests add to exercise a plugin; they are not the API.
  if (!template || template.startsWith('/__') || !doc.paths[template][method.toLowerCase()]) return [];
  return check(method, template, res);
}
