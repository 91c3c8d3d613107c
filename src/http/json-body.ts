import type { FastifyInstance } from 'fastify';
import { badRequest } from '../errors/index.js';

// JSON request bodies: Fastify's own parser (empty body and malformed JSON are refused as before),
// plus two rules JSON.parse does not apply:
// - a key `__proto__`, or `constructor` holding `prototype` (the keys of prototype pollution), is
//   refused before any code sees the object. The JSON is well formed, so the answer is not "malformed":
//   it is the validation error of any unknown field, naming each such key (dotted path);
// - a string holding a lone UTF-16 surrogate ("\ud800") is refused. Such a string is not Unicode text;
//   stored, it comes back as U+FFFD.
// One exception to "empty is refused": a DELETE with `Content-Type: application/json` and an empty
// body (many HTTP clients set the header on every request) has no body, as a DELETE without the header.

/** With the `u` flag a surrogate range matches only unpaired surrogates (pairs are one code point). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
/** Only a `\u` escape of a surrogate can produce one: raw UTF-8 input is decoded to valid text. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;

/** The dotted paths of the keys `__proto__` and `constructor` (when it holds `prototype`), in order. */
function forbiddenKeysAt(value: unknown, path: string, found: string[]): string[] {
  if (value === null || typeof value !== 'object') return found;
  // JSON.parse defines `__proto__` as an own property (it never sets the prototype), so it is listed.
  for (const [key, item] of Object.entries(value) as [string, unknown][]) {
    const at = path ? `${path}.${key}` : key;
    const holdsPrototype = item !== null && typeof item === 'object' && Object.hasOwn(item, 'prototype');
    if (key === '__proto__' || (key === 'constructor' && holdsPrototype)) found.push(at);
    else forbiddenKeysAt(item, at, found);
  }
  return found;
}

function parsedOrNull(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** The dotted path of the first string (value or key) holding a lone surrogate, or null. */
function loneSurrogateAt(value: unknown, path: string): string | null {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path || 'body' : null;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (LONE_SURROGATE.test(key)) return at;
    const found = loneSurrogateAt(item, at);
    if (found !== null) return found;
  }
  return null;
}

export function registerJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '' && request.method === 'DELETE') return done(null, undefined);
    void parse(request, body as string, (err: Error | null, value?: unknown) => {
      // Fastify's parser gives the same error for both; a body JSON.parse takes was refused for its keys.
      if (err && (err as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
        const fields = forbiddenKeysAt(parsedOrNull(body as string), '', []);
        if (fields.length > 0) {
          return done(
            badRequest(
              fields.map((field) => ({ field, unknown: 'Unknown field.' })),
              'Request validation failed.',
            ),
            undefined,
          );
        }
      }
      if (err || !SURROGATE_ESCAPE.test(body as string)) return done(err, value);
      const field = loneSurrogateAt(value, '');
      if (field === null) return done(null, value);
      done(badRequest([{ field, invalid: 'Must be valid Unicode text (a lone UTF-16 surrogate is not).' }], 'Request validation failed.'), undefined);
    });
  });
}
