import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { errorBody, notFoundHandler, sendError } from '../errors/index.js';

// A request the router cannot place is either for a path nobody serves (404 "Route not found.") or
// for a known path with a method it does not take (405 with Allow, RFC 9110 section 15.5.6). Every
// route is recorded as it is added, so new modules need nothing to get this. A route may also hand
// its own request here (reply.callNotFound, as the static files under /docs do for an unknown file):
// that stays 404.

interface PathEntry {
  pattern: RegExp;
  methods: Set<string>;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

/** `/artists/:artist_id/albums` -> a regular expression matching the concrete paths it serves. */
export function routePattern(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => {
      if (segment.startsWith(':')) return '[^/]+';
      if (segment === '*') return '.*';
      return escapeRegExp(segment).replace(/\*/g, '.*');
    })
    .join('/');
  // Exact, as the router is: a trailing slash is another path.
  return new RegExp(`^${source}$`);
}

/**
 * `/artists/`, `/artists//1`: a path with an empty segment names nothing in this API (trailing slashes
 * are not ignored), so it is 404 "Route not found." before anything else looks at it, rather than an
 * empty `{artist_id}` or a token check. The docs pages (`/docs/`) are Swagger UI's own.
 */
export function hasEmptySegment(url: string): boolean {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  return path.length > 1 && (path.endsWith('/') || path.includes('//')) && !path.startsWith('/docs/');
}

async function methodNotAllowedPlugin(app: FastifyInstance) {
  const paths = new Map<string, PathEntry>();

  app.addHook('onRoute', (route: RouteOptions) => {
    let entry = paths.get(route.url);
    if (!entry) {
      entry = { pattern: routePattern(route.url), methods: new Set() };
      paths.set(route.url, entry);
    }
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) entry.methods.add(method);
  });

  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = new Set<string>();
    for (const entry of paths.values()) {
      if (entry.pattern.test(path)) for (const method of entry.methods) allowed.add(method);
    }
    // A route that takes this very method sent us here itself (reply.callNotFound: e.g. the docs'
    // static files for a file that is not there): the path is known, the resource is not.
    if (allowed.size === 0 || allowed.has(request.method)) return notFoundHandler(request, reply);
    const allow = [...allowed].sort().join(', ');
    return sendError(reply.header('Allow', allow), 405, errorBody('METHOD_NOT_ALLOWED', `Method ${request.method} is not allowed here; allowed: ${allow}.`));
  });
}

export default fp(methodNotAllowedPlugin, { name: 'method-not-allowed' });
