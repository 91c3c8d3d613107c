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
    schema: { type: 'string', format: 'uri-reference', examples: ['/artists/1'] },
  },
  'WWW-Authenticate': {
    description: 'The Bearer challenge (RFC 6750).',
    schema: { type: 'string', examples: ['Bearer realm="music-catalogue", error="invalid_token"'] },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 0, examples: [1] },
  },
};

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

function addHeaders(status: string, response: Json): void {
  const used = new Set(['X-Request-Id']);
  if (status === '201') used.add('Location');
  if (status === '401') used.add('WWW-Authenticate');
  if (status === '429' || status === '503') used.add('Retry-After');
  const headers = (response.headers ?? {}) as Json;
  for (const name of used) headers[name] ??= ref(name);
  response.headers = headers;
}

/** Completes the document @fastify/swagger generated from the route schemas. */
export function completeDocument(doc: Json): Json {
  const components = (doc.components ??= {}) as Json;
  components.headers = { ...HEADER_COMPONENTS, ...((components.headers as Json) ?? {}) };
  const paths = (doc.paths ?? {}) as Record<string, Json>;
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      operation.operationId ??= derivedOperationId(method, path);
      // A route that says only its summary has said all there is to say.
      if (!operation.description && typeof operation.summary === 'string') operation.description = operation.summary;
      for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, Json>)) {
        if (response.description === 'Default Response') response.description = DEFAULT_DESCRIPTIONS[status] ?? 'Response.';
        addHeaders(status, response);
      }
    }
  }
  return doc;
}
