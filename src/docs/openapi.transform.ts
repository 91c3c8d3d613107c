// Facts every response shares (set by platform hooks, not by each route) are written into the
// generated document here, so the routes do not repeat them and the document cannot forget them.

type Json = Record<string, unknown>;

const HEADER_COMPONENTS: Record<string, Json> = {
  'X-Request-Id': {
    description: 'Identifies this request in the service logs; echoed when the client sent a valid one.',
    schema: { type: 'string', maxLength: 128, examples: ['5f0c6f5e-3c2a-4c56-9d43-1f1c5b8e2a10'] },
  },
  Location: {
    description: 'Path of the created resource.',
    schema: { type: 'string', format: 'uri-reference', maxLength: 200, examples: ['/artists/1'] },
  },
  'WWW-Authenticate': {
    description: 'The Bearer challenge (RFC 6750).',
    schema: { type: 'string', maxLength: 100, examples: ['Bearer realm="music-catalogue", error="invalid_token"'] },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 0, maximum: 3600, examples: [1] },
  },
  'RateLimit-Limit': {
    description:
      'Requests allowed per minute for this caller (when rate limiting is on: RATE_LIMIT_PER_MINUTE > 0). On the 429 of the failed-authentication lockout: failed authentications allowed per minute from this address, the limit that refused it.',
    schema: { type: 'integer', minimum: 1, maximum: 10_000_000, examples: [600] },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the current minute (when rate limiting is on); 0 on a 429.',
    schema: { type: 'integer', minimum: 0, maximum: 10_000_000, examples: [599] },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the current minute ends and the count starts again (when rate limiting is on); on a 429, what Retry-After says.',
    schema: { type: 'integer', minimum: 0, maximum: 60, examples: [42] },
  },
  'Idempotent-Replayed': {
    description: 'Present (`true`) when this answer is the stored answer to an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
};

/** Answers any operation can give, before a route is even chosen (src/http/limits.ts, Fastify's URL checks). */
const ANY_OPERATION_ERRORS: Record<string, string> = {
  '400': 'Invalid request: `details` lists every failed rule (also a URL with bad percent-encoding, or an unknown query parameter).',
  '414': 'URI too long: the URL is over 8 KiB, or a path segment over 200 characters.',
  '431': 'Request line and headers over 16 KiB.',
};

/** Headers a list's answer carries, which a 304 for it carries as well. */
const LIST_HEADERS = ['X-Total-Count', 'Link'];
const SCOPE_ALSO: Record<string, string> = { read: ' (`write` and `admin` include it)', write: ' (`admin` includes it)', admin: '' };

const DEFAULT_DESCRIPTIONS: Record<string, string> = {
  '200': 'OK.',
  '201': 'Created; `Location` names the new resource.',
  '204': 'Done; no body.',
  '304': 'Not modified since the ETag sent in If-None-Match.',
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** `getArtistsByArtistIdAlbums`-style id for routes that did not declare one. */
export function derivedOperationId(method: string, path: string): string {
  const words = path
    .split('/')
    .filter(Boolean)
    .map((segment) => {
      const param = /^\{(.+)\}$/.exec(segment);
      const name = (param ? `by_${param[1]}` : segment).replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''));
      return name.charAt(0).toUpperCase() + name.slice(1);
    });
  return method + words.join('');
}

function addHeaders(status: string, response: Json, operation: Json): void {
  const used = new Set(['X-Request-Id']);
  if (status === '201') used.add('Location');
  if (status === '401') used.add('WWW-Authenticate');
  if (status === '429' || status === '503') used.add('Retry-After');
  // Every authenticated operation is rate limited (/health and /ready are not): each answer says where it stands.
  if (Array.isArray(operation.security) && operation.security.length > 0) {
    for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) used.add(name);
  }
  // A replay repeats a stored answer of ours, which is never a 5xx (a 5xx frees the key).
  const parameters = (operation.parameters ?? []) as Json[];
  if (parameters.some((p) => p.in === 'header' && p.name === 'idempotency-key') && Number(status) < 500) used.add('Idempotent-Replayed');
  const headers = (response.headers ?? {}) as Json;
  for (const name of used) headers[name] ??= ref(name);
  response.headers = headers;
}

/** A 304 stands for the 200 it revalidates: it carries the same paging headers. */
function notModifiedHeaders(responses: Record<string, Json>): void {
  const ok = responses['200']?.headers as Json | undefined;
  const notModified = responses['304'];
  if (!ok || !notModified) return;
  const headers = (notModified.headers ??= {}) as Json;
  for (const name of LIST_HEADERS) if (ok[name]) headers[name] ??= ok[name];
}

function completeResponses(operation: Json, method: string): void {
  const responses = (operation.responses ?? {}) as Record<string, Json>;
  for (const [status, description] of Object.entries(ANY_OPERATION_ERRORS)) {
    responses[status] ??= { description, content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } } };
  }
  notModifiedHeaders(responses);
  for (const [status, response] of Object.entries(responses)) {
    if (response.description === 'Default Response') response.description = DEFAULT_DESCRIPTIONS[status] ?? 'Response.';
    if (method === 'head') delete response.content; // HEAD: the GET's status and headers, never a body
    addHeaders(status, response, operation);
  }
  // In status order, as a reader looks for them.
  operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

const INT32 = { min: -2147483648, max: 2147483647 };

/**
 * `format: int32` on every integer schema whose bounds fit in 32 bits (ids, counts, ages, years: the
 * service stores and accepts nothing wider), so generated clients pick the right type.
 */
function int32Formats(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(int32Formats);
  if (!node || typeof node !== 'object') return;
  const schema = node as Json;
  if (schema.type === 'integer' && schema.format === undefined && typeof schema.minimum === 'number' && typeof schema.maximum === 'number') {
    if (schema.minimum >= INT32.min && schema.maximum <= INT32.max) schema.format = 'int32';
  }
  for (const value of Object.values(schema)) int32Formats(value);
}

/**
 * A parameter's `if`/`then`/`else` is how the service reads the text it receives (GET /users/{id}:
 * digits become an integer id and are checked as one, anything else must be an alias name). A client
 * sends text either way and a validating proxy would read `then: integer` against that text, so the
 * document keeps the text's own rules (type, maxLength) and the description says the rest.
 */
function textParameters(operation: Json): void {
  for (const parameter of (operation.parameters ?? []) as Json[]) {
    const schema = parameter.schema as Json | undefined;
    if (schema) for (const key of ['if', 'then', 'else']) delete schema[key];
  }
}

/** Completes the document @fastify/swagger generated from the route schemas. */
export function completeDocument(doc: Json): Json {
  const components = (doc.components ??= {}) as Json;
  components.headers = { ...HEADER_COMPONENTS, ...(components.headers ?? {}) };
  const paths = (doc.paths ?? {}) as Record<string, Json>;
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      operation.operationId ??= derivedOperationId(method, path);
      if (method === 'head' && typeof operation.summary === 'string') operation.summary = `${operation.summary} (headers only)`;
      // A route that says only its summary has said all there is to say.
      if (!operation.description && typeof operation.summary === 'string') operation.description = operation.summary;
      const scope = operation['x-required-scope'];
      if (typeof scope === 'string')
        operation.description =
          `${typeof operation.description === 'string' ? operation.description : ''}\n\nNeeds a token with the \`${scope}\` scope${SCOPE_ALSO[scope] ?? ''}.`.trim();
      textParameters(operation);
      completeResponses(operation, method);
    }
  }
  int32Formats(doc);
  // The API is meant for clients outside the operator's network too (OWASP API9: say the audience).
  for (const server of (doc.servers ?? []) as Json[]) server['x-internal'] ??= false;
  return doc;
}
