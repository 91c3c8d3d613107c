import fp from 'fastify-plugin';
import { WEBHOOKS_DOCUMENT } from '../modules/webhooks/webhooks.openapi.js';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { packageInfo as pkg } from '../package-info.js';
import { completeDocument } from './openapi.transform.js';

const DOCS_CSP = [
  "default-src 'self'",
  "base-uri 'self'",
  "font-src 'self' https: data:",
  "frame-ancestors 'self'",
  "img-src 'self' data: validator.swagger.io",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' https: 'unsafe-inline'",
].join('; ');

/** A text logo: the service's name (an <img> may draw an SVG's text; no font or script is fetched). */
const DOCS_LOGO =
  `<svg xmlns="http://www.w3.org/2000/svg" width="260" height="40" viewBox="0 0 260 40">` +
  `<text x="0" y="28" font-family="sans-serif" font-size="24" font-weight="bold" fill="#ffffff">${pkg.name}</text></svg>`;

/** The document without its HEAD operations (a copy: @fastify/swagger-ui hands a clone). */
function withoutHead(document: Record<string, unknown>): Record<string, unknown> {
  const paths = (document.paths ?? {}) as Record<string, Record<string, unknown>>;
  for (const item of Object.values(paths)) delete item.head;
  return document;
}

/**
 * OpenAPI 3.1 generated from the route schemas (nothing is described twice), served at
 * /openapi.json, and Swagger UI at /docs from the bundled static files (works offline).
 */
async function docsPlugin(app: FastifyInstance) {
  await app.register(swagger, {
    // Every GET also answers HEAD (Fastify's exposeHeadRoutes): the document says so.
    exposeHeadRoutes: true,
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'music-catalogue',
        version: pkg.version,
        description:
          `${pkg.description}\n\nAuthenticate with \`Authorization: Bearer <token>\`. Every error uses the ErrorBody schema.` +
          '\n\nConditional requests: reads send a strong `ETag`; `If-None-Match` with it gives `304` without a body; `PATCH`/`DELETE` with `If-Match` (an ETag or `*`) change nothing and answer `412` when the resource has changed since. ' +
          'The creating POSTs of artists, albums, songs and users accept `Idempotency-Key` (retries replay the first answer; the same key with another request is `409`); POST /tokens does not, since its answer holds a secret. ' +
          'A method a known path does not take is `405 METHOD_NOT_ALLOWED` with an `Allow` header listing the methods it does. ' +
          'Paths are exactly as listed here: a trailing slash or an empty segment is another path, `404`. ' +
          'Each operation names the scope it needs in `security` and `x-required-scope` (admin implies write implies read). ' +
          'Every `GET` also answers `HEAD`: the same status and headers, without a body (listed as operations of their own in /openapi.json; the /docs page leaves them out).',
        // MIT (LICENSE); the version follows docs/versioning.md.
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // The document describes the server that serves it, in whatever environment that is; its API is public-facing.
      servers: [{ url: '/', description: 'This server: the one serving this document (production, staging or local alike).' }],
      tags: [
        { name: 'artists', description: 'Artists of the catalogue' },
        { name: 'albums', description: 'Albums of an artist' },
        { name: 'songs', description: 'Songs of an album' },
        { name: 'users', description: 'Users (admin): the query conventions and alias paths' },
        { name: 'aliases', description: 'Alias paths: named filter combinations' },
        { name: 'search', description: 'Full-text search over names' },
        { name: 'tokens', description: 'API tokens (admin)' },
        { name: 'health', description: 'Liveness and readiness' },
        { name: 'events', description: 'The change feed: every write of the catalogue, users and aliases, in commit order' },
        { name: 'webhooks', description: 'Events POSTed to subscribed URLs, signed (admin)' },
      ],
      webhooks: WEBHOOKS_DOCUMENT,
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API token: `Authorization: Bearer <token>`.' },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    transformObject: (documents) =>
      completeDocument(('openapiObject' in documents ? documents.openapiObject : documents.swaggerObject) as Record<string, unknown>),
    refResolver: {
      // Shared schemas keep their $id as their component name.
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });

  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // The page shows the service's own name, in its title and where Swagger UI puts its logo.
    theme: { title: `${pkg.name} API` },
    logo: { type: 'image/svg+xml', content: Buffer.from(DOCS_LOGO), href: '/docs' },
    uiConfig: { persistAuthorization: true, tryItOutEnabled: false },
    // The page lists each GET once: a HEAD row beside every GET doubled the list for what one sentence of
    // the description says (every GET answers HEAD). /openapi.json keeps them, for tools and clients.
    transformSpecification: (document: Record<string, unknown>) => withoutHead(document),
    // @fastify/swagger-ui's strict default, except that Swagger UI's syntax highlighter sets inline
    // style attributes (allowed here, as helmet's default does; scripts stay 'self' only), and no
    // upgrade-insecure-requests: the service speaks plain HTTP behind whatever terminates TLS.
    staticCSP: DOCS_CSP,
    logLevel: 'warn',
  });

  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

export default fp(docsPlugin, { name: 'docs' });
