import fp from 'fastify-plugin';
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyServerFactory } from 'fastify';
import { sql, type Kysely } from 'kysely';
import { directSqlite } from '../db/precompiled.js';
import { isPostgres } from '../db/dialect.js';
import { sqliteTableVersions, stampOf, type TableVersions, type VersionedTable } from '../db/table-stamps.js';
import { learnTables, Reads, readsWhile, tablesRead } from '../db/reads.js';
import { arrivalOf, markArrival } from '../db/arrivals.js';
import { requestId } from './request-id.js';
import { logCompleted, logIncoming } from './request-log.js';
import type { RequestSeries } from '../metrics/request-metrics.js';
import { bucketKey, type RateLimits } from './rate-limit.plugin.js';

// Repeated reads, answered before Fastify. A GET that a route marks `cached` is answered from the
// bytes of an earlier identical request (same URL, same Authorization header) while the tables that
// answer read are exactly as they were then, and while no credential or time-dependent row it read
// has expired. Nobody declares those tables: the answer learns them as it is read (db/reads.ts). The
// request runs inside a read set, every statement it runs adds the tables its text names (SQLite:
// prepared(); PostgreSQL: the pool clients' query), and whatever is answered from memory adds the
// table whose version it is kept under. The token lookup is a statement like any other, so every
// answer to a stored token depends on the tokens table: a token revoked retires its answers. An
// answer that read a table no version covers, or nothing, is not stored (fail safe).
// The versions of every table (db/table-stamps.ts) are read for every request of a URL asked before
// (askedBefore: the first ask goes to Fastify unstamped), after it arrived, and an entry is served
// only while the versions of the tables it read are the ones it was stored under, and before its
// `until`: the first instant it could change without a write (the caller's token expiring, a token
// it lists expiring; db/reads.ts readUntil). Any write to one of its tables retires it; a write
// elsewhere (a song) leaves the users' answers alone. So a cached answer is always the answer the
// database would give now; what it saves is Fastify's routing, hooks, validation and serialisation
// plus the token and data queries (most of a small GET).
// - SQLite: one small statement, synchronous; the versions are committed with each write, so a
//   commit by another process shows at once.
// - PostgreSQL: the same statement costs a round trip, so it is shared: the requests that arrive
//   while one read is under way all wait for the next read, which starts after every one of them
//   arrived. One round trip serves a whole batch, and none of them is answered from a state older
//   than its own arrival.
//
// What it must not skip is kept, through the code the Fastify path uses, or excluded:
// - request id: requestId(), which is Fastify's genReqId (echoed or new);
// - logging: the two lines of http/request-log.ts, which Fastify's LogController writes too;
// - metrics: the route's series from app.requestSeries, which the metrics hook observes;
// - conditional requests (If-None-Match), CORS (Origin), requests with a body, HEAD: not served here;
// - rate limiting: app.rateLimits.admit() counts the request in its token's bucket (the counter
//   @fastify/rate-limit's store takes from) and the answer carries its own RateLimit-* headers; past
//   the budget it goes through Fastify for its 429
//   (an address blocked after failed authentications does not matter: a cached answer is for a valid token);
// - credentials: the token's revocation retires the entry (tokens table), its expiry ends it (until);
// - drain: off once the server is closing, so those answers carry Connection: close.
// While a transaction is open on the SQLite connection, or the snapshot read fails, the request goes
// through Fastify as if there were no cache.

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The 200 answer of this GET route is a function of URL, token, the rows it reads and the
     * instants it reports (db/reads.ts) alone: it may be stored. Which tables it reads, it learns
     * as it reads them.
     */
    cached?: boolean;
  }
  interface FastifyInstance {
    responseCache: ResponseCacheStats;
  }
}

export interface ResponseCacheStats {
  stats(): { entries: number; bytes: number; hits: number; stores: number; enabled: boolean };
  /** Every GET route of the app, and whether its answers may be stored (`cached`). */
  routes(): readonly { url: string; cached: boolean }[];
}

interface Entry {
  /**
   * The response headers as writeHead takes them, [name, value, ...]. The values that differ per
   * answer (request id, RateLimit-Remaining/-Reset) are written into it, at the indexes `perAnswer`
   * recorded when it was built, just before writeHead copies the array into the response head.
   */
  head: string[];
  perAnswer: PerAnswerSlots;
  body: Buffer;
  /** The request metrics this answer is counted in. */
  series: RequestSeries;
  /** The rate-limit bucket of its Authorization header. */
  bucket: string;
  size: number;
  /** The tables it was read from, and their versions then. */
  tables: readonly VersionedTable[];
  stamp: string;
  /** Served only before this instant (ms since the epoch): when what it read expires (db/reads.ts readUntil). */
  until: number;
}

/** Where the values written per answer sit in an entry's head (an index into [name, value, ...]). */
interface PerAnswerSlots {
  requestId: number;
  /** Present when rate limiting is on. */
  remaining?: number;
  reset?: number;
}

/** The start of an entry's head: the headers whose values are written per answer, and where they are. */
function perAnswerHead(limits: RateLimits | null | undefined): { head: string[]; perAnswer: PerAnswerSlots } {
  const head: string[] = [];
  const slot = (name: string, value = '') => head.push(name, value) - 1;
  const perAnswer: PerAnswerSlots = { requestId: slot('x-request-id') };
  if (limits) {
    slot('ratelimit-limit', String(limits.max));
    perAnswer.remaining = slot('ratelimit-remaining');
    perAnswer.reset = slot('ratelimit-reset');
  }
  return { head, perAnswer };
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The slot the server calls first for every request; the plugin fills it once the app is built.
 * `serve` either answers the request or hands it to `fastify` (at once or once its stamp is read).
 */
export interface FrontLane {
  serve?: (req: IncomingMessage, res: ServerResponse, fastify: Handler) => void;
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
      markArrival(req);
      if (lane.serve) lane.serve(req, res, handler);
      else handler(req, res);
    });
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    return server;
  };
}

/** Headers that belong to one response, not to the representation. */
const PER_RESPONSE = new Set([
  'x-request-id',
  'content-length',
  'connection',
  'date',
  'keep-alive',
  'transfer-encoding',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'retry-after',
]);
const STAMP = Symbol('response-cache stamp');
const READS = Symbol('response-cache reads');
type StampedRequest = IncomingMessage & { [STAMP]?: TableVersions; [READS]?: Reads };

const keyOf = (req: IncomingMessage) => `${req.headers.authorization} ${req.url}`;

/**
 * A key's 32-bit hash (FNV-1a over its UTF-16 code units): a small integer, which a Set holds in its own
 * table without a string beside it. What askedOnce remembers of a URL asked once: the keys themselves
 * (a token and a URL) held the request's URL string alive in a worker's old generation, up to 16,384 of
 * them, dropped whole at each clear and refilled (a Set of hashes: 20 bytes a URL, of keys: 85 besides
 * the URL's own string; issue 37's 200 MB a worker). Two keys with one hash only make the second one's
 * first answer stored as if it were asked before (one chance in 2^32 / maxAskedOnce a request).
 */
export function keyHash(key: string): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h;
}

async function responseCachePlugin(app: FastifyInstance, opts: { lane: FrontLane }) {
  const maxBytes = app.config.responseCacheBytes;
  const enabled = maxBytes > 0;
  const limits = app.rateLimits;
  const entries = new Map<string, Entry>();
  let bytes = 0;
  let hits = 0;
  let stores = 0;
  let closing = false;

  const routes: { url: string; cached: boolean }[] = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.includes('GET')) routes.push({ url: route.url, cached: route.config?.cached === true });
  });
  app.decorate('responseCache', {
    stats: () => ({ entries: entries.size, bytes, hits, stores, enabled }),
    routes: () => routes,
  });
  if (!enabled) return;
  // Every table the database has: an answer that reads one no version covers is not stored (db/reads.ts).
  learnTables(await catalogue(app.db as unknown as Kysely<unknown>));

  // Answers are stored for URLs asked before (with the same Authorization header): a URL asked for
  // the first time goes to Fastify without reading the versions, and its answer is not stored. Real
  // clients send thousands of distinct queries, and storing answers no one asks for again filled the
  // cache with them: under the distinct mix a worker's peak RSS went from 148-151 MB to 133-136 MB on
  // SQLite (152-156 to 136-145 on PostgreSQL), throughput unchanged. A repeated URL is answered from
  // the cache from its third time on.
  const askedOnce = new Set<number>();
  const maxAskedOnce = Math.max(1000, Math.floor(maxBytes / 1024));
  /** Whether `key` was asked before; remembers its hash when not (at most maxAskedOnce keys, then anew). */
  function askedBefore(key: string): boolean {
    const hash = keyHash(key);
    if (askedOnce.has(hash)) return true;
    if (askedOnce.size >= maxAskedOnce) askedOnce.clear();
    askedOnce.add(hash);
    return false;
  }

  // Fastify logs each request at info; a disabled logger (logger: false) has no levels at all.
  const logRequests = (app.log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.('info') ?? false;
  const entryLimit = Math.max(1, Math.floor(maxBytes / 16));
  const trustsNoProxy = app.config.trustProxy === false;

  /** Counts the request as the rate-limit hook would and fills in its RateLimit-* headers; false: Fastify answers it (429). */
  function withinLimits(req: IncomingMessage, entry: Entry, limits: RateLimits): boolean {
    const admitted = limits.admit(entry.bucket);
    if (!admitted) return false;
    entry.head[entry.perAnswer.remaining!] = String(admitted.remaining);
    entry.head[entry.perAnswer.reset!] = String(admitted.reset);
    return true;
  }

  /** A request waiting for its batch's stamp (`stamped`), or, asked for the first time, only for the end of the turn. */
  interface Waiting {
    req: IncomingMessage;
    res: ServerResponse;
    fastify: Handler;
    started: number;
    stamped: boolean;
  }

  /** Fastify answers it, learning what the answer reads (db/reads.ts) so that onSend can store it. */
  function throughFastify(req: IncomingMessage, res: ServerResponse, fastify: Handler, stamp: TableVersions) {
    const reads = new Reads();
    (req as StampedRequest)[STAMP] = stamp;
    (req as StampedRequest)[READS] = reads;
    readsWhile(reads, () => fastify(req, res));
  }

  /** answer(), for callers outside a request handler (a batch, a promise): a failure is that request's alone. */
  function answerSafely(w: Waiting, stamp: TableVersions) {
    try {
      answer(w.req, w.res, w.fastify, stamp, w.started);
    } catch (error) {
      app.log.error({ err: error }, 'response cache failed to answer; the request goes through Fastify');
      if (!w.res.headersSent) w.fastify(w.req, w.res);
      else w.res.destroy();
    }
  }

  function answer(req: IncomingMessage, res: ServerResponse, fastify: Handler, stamp: TableVersions, started: number) {
    if (closing) return fastify(req, res);
    const key = keyOf(req);
    const entry = entries.get(key);
    if (entry && Date.now() >= entry.until) {
      // Expired (its token, or a token it lists): never served again, so not kept either.
      entries.delete(key);
      bytes -= entry.size;
      return throughFastify(req, res, fastify, stamp);
    }
    if (!entry || stampOf(stamp, entry.tables) !== entry.stamp || (limits && !withinLimits(req, entry, limits))) {
      return throughFastify(req, res, fastify, stamp);
    }

    hits++;
    const id = requestId(req);
    // The client's address is the socket's unless proxies are trusted (then only Fastify resolves it).
    if (logRequests)
      logIncoming(
        app.log,
        {
          method: req.method,
          url: req.url,
          headers: req.headers,
          host: req.headers.host,
          ip: trustsNoProxy ? req.socket.remoteAddress : undefined,
          socket: req.socket,
        },
        id,
      );
    entry.head[entry.perAnswer.requestId] = id;
    res.writeHead(200, entry.head);
    res.end(entry.body);
    const seconds = (performance.now() - started) / 1000;
    entry.series.observe(seconds);
    if (logRequests) logCompleted(app.log, 200, seconds * 1000, id);
  }

  // The stamp, shared by a batch of requests and always read after all of them arrived.
  // - SQLite: the requests parsed in one turn of the event loop are answered together right after it
  //   (setImmediate), under one stamp read then; reading it costs a read transaction (locks on the
  //   -shm file), the largest single cost of an answer when read per request.
  // - PostgreSQL: app.versionsAfter (db/arrivals.ts); the requests that arrive during one read share the next.
  // A URL asked for the first time reads no stamp, but is handed to Fastify at the end of the turn
  // too, with the others parsed in it, not from within the HTTP parser's callback: that cost about a
  // tenth more CPU per distinct read (1,078-1,118 us against 930-1,070 us, SQLite, 2 workers).
  let queued: Waiting[] = [];
  function answerQueued() {
    const batch = queued;
    queued = [];
    let stamp: TableVersions | undefined;
    if (batch.some((w) => w.stamped)) {
      try {
        const handle = directSqlite(app.db);
        stamp = handle && sqliteTableVersions(handle);
      } catch {
        stamp = undefined; // the database fails: Fastify answers with the error it meets
      }
    }
    for (const w of batch) {
      if (!w.stamped || stamp === undefined) w.fastify(w.req, w.res);
      else answerSafely(w, stamp);
    }
  }
  // PostgreSQL: the versions read after the request arrived, shared with the token lookup and the users
  // index of the same requests (db/arrivals.ts): one round trip serves both, not one each.
  const snapshot = isPostgres(app.db) ? (req: IncomingMessage) => Promise.resolve(app.versionsAfter(arrivalOf(req))) : undefined;

  opts.lane.serve = (req, res, fastify) => {
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
      return fastify(req, res);
    }
    const key = keyOf(req);
    const stamped = entries.has(key) || askedBefore(key);
    const started = performance.now();
    if (stamped && snapshot) {
      snapshot(req).then(
        (stamp) => answerSafely({ req, res, fastify, started, stamped }, stamp),
        () => fastify(req, res),
      );
      return;
    }
    if (queued.push({ req, res, fastify, started, stamped }) === 1) setImmediate(answerQueued);
  };

  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });

  // Registered after the hooks that shape a 200 (ETag, security headers, drain), so it sees the final answer.
  app.addHook('onSend', (request, reply, payload, done) => {
    const stamp = (request.raw as StampedRequest)[STAMP];
    const reads = (request.raw as StampedRequest)[READS];
    // What the answer read: undefined when it cannot be told (db/reads.ts), and then it is not stored.
    const tables = reads && request.routeOptions.config?.cached === true ? tablesRead(reads) : undefined;
    if (
      stamp !== undefined &&
      tables !== undefined &&
      reads!.until > Date.now() &&
      reply.statusCode === 200 &&
      request.method === 'GET' &&
      (typeof payload === 'string' || Buffer.isBuffer(payload)) &&
      !reply.hasHeader('connection')
    ) {
      const body = typeof payload === 'string' ? Buffer.from(payload) : payload;
      const { head, perAnswer } = perAnswerHead(limits);
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (PER_RESPONSE.has(name) || value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [value]) head.push(name, String(v));
      }
      head.push('content-length', String(body.length));
      const size = body.length + head.reduce((n, s) => n + s.length, 0) + 64;
      if (size <= entryLimit) {
        const key = keyOf(request.raw);
        const old = entries.get(key);
        if (old) bytes -= old.size;
        // Oldest first out: an old entry is the likeliest to be stale.
        while (bytes + size > maxBytes && entries.size > 0) {
          const [oldestKey, oldest] = entries.entries().next().value as [string, Entry];
          entries.delete(oldestKey);
          bytes -= oldest.size;
        }
        entries.delete(key); // re-inserted last: the eviction order is the order of storing
        askedOnce.delete(keyHash(key));
        entries.set(key, {
          head,
          perAnswer,
          body,
          series: app.requestSeries('GET', 200, request.routeOptions.url ?? request.url),
          bucket: bucketKey(request),
          size,
          tables,
          stamp: stampOf(stamp, tables),
          until: reads!.until,
        });
        bytes += size;
        stores++;
      }
    }
    done(null, payload);
  });
}

/** The names of the tables (and views) of the database the app uses. */
async function catalogue(db: Kysely<unknown>): Promise<string[]> {
  const query = isPostgres(db)
    ? sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = any (current_schemas(false))`
    : sql<{ name: string }>`select name from sqlite_master where type in ('table', 'view')`;
  return (await query.execute(db)).rows.map((r) => r.name);
}

export default fp(responseCachePlugin, { name: 'response-cache', dependencies: ['database', 'metrics', 'conditional', 'drain', 'security', 'rate-limit'] });
