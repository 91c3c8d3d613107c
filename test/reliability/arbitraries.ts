import fc from 'fast-check';

// Generators of hostile HTTP requests for the fuzz test: wrong types, huge numbers, deep nesting,
// unicode and NUL, prototype-pollution keys, SQL and path-traversal text.

const NASTY_TEXT = [
  '__proto__',
  'constructor',
  'prototype',
  '..',
  '../../etc/passwd',
  '..\\..\\windows\\win.ini',
  '/etc/passwd',
  "1' OR '1'='1",
  '1; DROP TABLE artists; --',
  "name' --",
  'id desc; select * from tokens',
  '\u0000',
  'a\u0000b',
  '\u202e',
  '😀',
  'ﬀ',
  'Ω',
  '<script>alert(1)</script>',
  '${7*7}',
  '%s%n',
  '-1',
  '0',
  '1.5',
  '1e3',
  '0x10',
  ' 1',
  'NaN',
  'Infinity',
  '9007199254740993',
  '99999999999999999999999999999999',
  'true',
  'null',
  '[]',
  '{}',
  '',
];

/** Text to put in a path segment, query value or string field. */
export const nastyText = fc.oneof(
  fc.constantFrom(...NASTY_TEXT),
  fc.integer().map(String),
  fc.double().map(String),
  fc.string({ maxLength: 30 }),
  fc.fullUnicodeString({ maxLength: 20 }),
  fc.constantFrom('a', 'x').chain((c) => fc.integer({ min: 100, max: 3000 }).map((n) => c.repeat(n))),
);

const segment = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 4 }).map(String) },
  { weight: 3, arbitrary: nastyText.map(encodeURIComponent) },
  { weight: 1, arbitrary: fc.constantFrom('%', '%ZZ', '%00', '%2e%2e', '..%2f..%2f', '%C0%AE', '.', '..', ';', '%E2%80%AE') },
);

const TEMPLATES = [
  '/artists',
  '/artists/{}',
  '/artists/{}/albums',
  '/artists/{}/albums/{}',
  '/artists/{}/albums/{}/songs',
  '/artists/{}/albums/{}/songs/{}',
  '/tokens',
  '/tokens/{}',
  '/users',
  '/users/{}',
  '/aliases',
  '/aliases/{}/{}',
  '/health',
  '/ready',
  '/openapi.json',
  '/docs/{}',
  '/docs/static/{}',
  '/{}',
];

export const path = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.tuple(fc.constantFrom(...TEMPLATES), fc.array(segment, { minLength: 3, maxLength: 3 })).map(([t, s]) => {
      let i = 0;
      return t.replace(/\{\}/g, () => s[i++]!);
    }),
  },
  { weight: 1, arbitrary: fc.array(segment, { maxLength: 6 }).map((s) => `/${s.join('/')}`) },
  { weight: 1, arbitrary: fc.constantFrom('//artists', '/artists//1', '/./artists', '/artists/1/', '/ARTISTS/1', '/artists/1/../../tokens') },
);

const queryKey = fc.oneof(
  fc.constantFrom('name', 'year', 'sort_by', 'order', 'sort', 'page', 'size', 'offset', 'limit', 'pagesize', 'status', 'lives_in'),
  fc.constantFrom('__proto__', 'constructor', '__proto__[polluted]', 'constructor[prototype][polluted]', 'a[b][c]', 'name[]', '', 'x'),
  fc.string({ maxLength: 10 }),
);

export const query = fc
  .array(fc.tuple(queryKey, nastyText, fc.boolean()), { maxLength: 5 })
  .map((pairs) =>
    pairs.map(([k, v, raw]) => `${encodeURIComponent(k)}=${raw ? v.replace(/[^\x21-\x7e]|[#&]/gu, encodeURIComponent) : encodeURIComponent(v)}`).join('&'),
  )
  .map((q) => (q ? `?${q}` : ''));

export const method = fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'GET', 'POST', 'PATCH');

const headerText = fc.string({ maxLength: 60 });

export function headers(tokens: string[]) {
  return fc.record(
    {
      authorization: fc.oneof(
        fc.constantFrom(...tokens.map((t) => `Bearer ${t}`)),
        headerText.map((t) => `Bearer ${t}`),
        fc.constantFrom('Bearer', 'Basic dXNlcjpwYXNz', 'bearer  mc_x', `Bearer ${'a'.repeat(600)}`),
        headerText,
      ),
      'content-type': fc.oneof(
        fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded'),
        fc.constantFrom('multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/xml', '*/*'),
        headerText,
      ),
      'x-request-id': headerText,
      'if-match': fc.oneof(headerText, fc.constant('*')),
      'if-none-match': fc.oneof(headerText, fc.constant('*')),
      'idempotency-key': headerText,
      accept: fc.constantFrom('application/json', 'text/html', '*/*', 'application/xml'),
      origin: fc.constantFrom('https://evil.example', 'null'),
    },
    { requiredKeys: [] },
  );
}

const depth = (open: string, close: string, n: number) => `${open.repeat(n)}${close.repeat(n)}`;

const RAW_BODIES = [
  '{"__proto__":{"polluted":true},"name":"A","image":"https://a.example/a"}',
  '{"constructor":{"prototype":{"polluted":true}},"name":"A","image":"https://a.example/a"}',
  '{"name":"A","image":"https://a.example/a","__proto__":{"admin":true}}',
  '{"name":"A\\u0000B","image":"https://a.example/a"}',
  '{"name":"A","year":1e400,"image":"https://a.example/a"}',
  '{"name":"A","year":123456789012345678901234567890,"image":"https://a.example/a"}',
  '{"name":"A","year":-0,"image":"https://a.example/a"}',
  '{"name":"A","time":"99:99"}',
  '{"scopes":["admin","admin"],"name":"x"}',
  '{"name": "A", "name": "B", "image":"https://a.example/a"}',
  '{"name":',
  '{name: "A"}',
  "{'name':'A'}",
  '\u0000',
  '\ufeff{"name":"A","image":"https://a.example/a"}',
  'null',
  '[]',
  '"string"',
  '42',
  depth('[', ']', 5000),
  `${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}`,
];

const fieldValue = fc.oneof(
  nastyText,
  fc.integer(),
  fc.double(),
  fc.constantFrom(2 ** 53 + 1, -(2 ** 63), 1e308, Number.MIN_VALUE, 1997, 0, -1),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
  fc.constantFrom('https://a.example/x.jpg', 'javascript:alert(1)', 'file:///etc/passwd', '03:30', 'read', 'admin'),
);

/** A body close to a real one (known fields, wrong values, extra keys), any JSON, or raw text. */
export const body = fc.oneof(
  { weight: 1, arbitrary: fc.constant(undefined) },
  {
    weight: 4,
    arbitrary: fc
      .record(
        { name: fieldValue, image: fieldValue, year: fieldValue, time: fieldValue, scopes: fieldValue, query: fieldValue, extra: fieldValue },
        { requiredKeys: [] },
      )
      .map((o) => JSON.stringify(o)),
  },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  { weight: 2, arbitrary: fc.constantFrom(...RAW_BODIES) },
  { weight: 1, arbitrary: fc.fullUnicodeString({ maxLength: 50 }) },
);
