import fp from 'fastify-plugin';
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyServerFactory } from 'fastify';
import { directSqlite } from '../db/precompiled.js';
import { sqliteStamp } from '../query/count-cache.js';
import { requestId } from './request-id.js';

// Repeated reads, answered before Fastify. A GET that a route marks `cached` is answered from the
// bytes of an earlier identical request (same URL, same Authorization header) while the database is
// exactly as it was then: the SQLite data stamp (total_changes() of this connection plus
// data_version, which moves when another process commits) is read on every request, and any write
// anywhere, a token revoked included, moves it and so retires every entry at once. So a cached
// answer is always the answer the database would give now; what it saves is Fastify's routing,
// hooks, validation and serialisation plus the token and data queries (most of a small GET).
//
// What it must not skip is kept or excluded:
// - request id: made per request as Fastify makes it (echoed or new);
// - metrics: counted under the route's pattern, as the hook does; logging: the same two lines;
// - conditional requests (If-None-Match), CORS (Origin), requests with a body, HEAD: not served here;
// - rate limiting (per-response RateLimit-* headers and counting): the lane is off while it is on;
// - drain: off once the server is closing, so those answers carry Connection: close.
// Only SQLite has a stamp that costs microseconds; on PostgreSQL (and while a transaction is open on
// the SQLite connection) every request goes through Fastify.

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The 200 answer of this GET route is a function of URL, token and database alone (cacheable). */
    cached?: boolean;
  }
  interface FastifyInstance {
    responseCache: ResponseCacheStats;
  }
}

export interface ResponseCacheStats {
  stats(): { entries: number; bytes: number; hits: number; stores: number; enabled: boolean };
}

interface Entry {
  /** Response headers as [name, value, ...], without the per-request ones. */
  head: string[];
  body: Buffer;
  route: string;
  size: number;
}

/** The slot the server calls first for every request; the plugin fills it once the app is built. */
export interface FrontLane {
  serve?: (req: IncomingMessage, res: ServerResponse) => boolean;
}

/**
 * The HTTP server Fastify would make (same options), with `lane` asked first: a request it answers
 * never reaches Fastify.
 */
export function frontLaneServer(lane: FrontLane): FastifyServerFactory {
  return (handler, fastifyOptions) => {
    // Fastify has filled in its defaults by now, as it does for the server it makes itself.
    const options = fastifyOptions as { http?: ServerOptions; keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number };
    const server: Server = createServer(options.http ?? {}, (req, res) => {
      if (!lane.serve?.(req, res)) handler(req, res);
    });
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    return server;
  };
}

/** Headers that belong to one response, not to the representation. */
const PER_RESPONSE = new Set(['x-request-id', 'content-length', 'connection', 'date', 'keep-alive', 'transfer-encoding']);
const STAMP = Symbol('response-cache stamp');
type StampedRequest = IncomingMessage & { [STAMP]?: string };

const keyOf = (req: IncomingMessage) => `${req.headers.authorization} ${req.url}`;

async function responseCachePlugin(app: FastifyInstance, opts: { lane: FrontLane }) {
  const maxBytes = app.config.responseCacheBytes;
  const enabled = maxBytes > 0 && app.config.rateLimitPerMinute === 0;
  const entries = new Map<string, Entry>();
  let generation = '';
  let bytes = 0;
  let hits = 0;
  let stores = 0;
  let closing = false;

  app.decorate('responseCache', {
    stats: () => ({ entries: entries.size, bytes, hits, stores, enabled }),
  });
  if (!enabled) return;

  // Fastify logs each request at info; a disabled logger (logger: false) has no levels at all.
  const logRequests = (app.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('info') ?? false;
  const entryLimit = Math.max(1, Math.floor(maxBytes / 16));

  function clear(stamp: string) {
    entries.clear();
    bytes = 0;
    generation = stamp;
  }

  opts.lane.serve = (req, res) => {
    const h = req.headers;
    if (
      closing ||
      req.method !== 'GET' ||
      h.authorization === undefined ||
      h['if-none-match'] !== undefined ||
      h.origin !== undefined ||
      h['content-length'] !== undefined ||
      h['transfer-encoding'] !== undefined
    ) {
      return false;
    }
    const handle = directSqlite(app.db);
    if (!handle) return false;
    const started = performance.now();
    const stamp = sqliteStamp(handle);
    if (stamp !== generation) clear(stamp);
    (req as StampedRequest)[STAMP] = stamp;
    const entry = entries.get(keyOf(req));
    if (!entry) return false;

    hits++;
    const id = requestId(req);
    if (logRequests) {
      app.log.info({ reqId: id, req: { method: req.method, url: req.url, host: h.host, remoteAddress: req.socket.remoteAddress, remotePort: req.socket.remotePort } }, 'incoming request');
    }
    res.writeHead(200, ['x-request-id', id, ...entry.head, 'content-length', String(entry.body.length)]);
    res.end(entry.body);
    const seconds = (performance.now() - started) / 1000;
    app.recordRequest('GET', 200, entry.route, seconds);
    if (logRequests) app.log.info({ reqId: id, res: { statusCode: 200 }, responseTime: seconds * 1000 }, 'request completed');
    return true;
  };

  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });

  // Registered after the hooks that shape a 200 (ETag, security headers, drain), so it sees the final answer.
  app.addHook('onSend', (request, reply, payload, done) => {
    const stamp = (request.raw as StampedRequest)[STAMP];
    if (
      stamp === generation &&
      reply.statusCode === 200 &&
      request.method === 'GET' &&
      request.routeOptions.config?.cached === true &&
      (typeof payload === 'string' || Buffer.isBuffer(payload)) &&
      !reply.hasHeader('connection')
    ) {
      const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
      const head: string[] = [];
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (PER_RESPONSE.has(name) || value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [value]) head.push(name, String(v));
      }
      const size = body.length + head.reduce((n, s) => n + s.length, 0) + 64;
      if (size <= entryLimit) {
        const key = keyOf(request.raw);
        const old = entries.get(key);
        if (old) bytes -= old.size;
        // Oldest first out: entries are only ever valid for the current stamp, so age is a fair proxy.
        while (bytes + size > maxBytes && entries.size > 0) {
          const [oldestKey, oldest] = entries.entries().next().value as [string, Entry];
          entries.delete(oldestKey);
          bytes -= oldest.size;
        }
        entries.set(key, { head, body, route: request.routeOptions.url ?? request.url, size });
        bytes += size;
        stores++;
      }
    }
    done(null, payload);
  });
}

export default fp(responseCachePlugin, { name: 'response-cache', dependencies: ['database', 'metrics', 'conditional', 'drain', 'security'] });
