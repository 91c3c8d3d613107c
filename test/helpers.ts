import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { makeConfig, type Config } from '../src/config.js';
import { freshDatabase, type TestDatabase } from './database.js';
import { answerProblems } from './openapi-check.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

export interface TestContext {
  app: FastifyInstance;
  config: Config;
  /** Tokens with exactly one scope each, created through the API. */
  tokens: { read: string; write: string; admin: string };
  close(): Promise<void>;
}

/**
 * What this run sets for every app a test builds: npm run test:scale runs the conformance through
 * PgBouncer in transaction mode with named statements on and off (TEST_PG_PREPARED_STATEMENTS). A
 * test that calls makeConfig itself spreads this too, or its apps use named statements PgBouncer
 * does not track.
 */
export function runSettings(): { pgPreparedStatements?: boolean } {
  const prepared = process.env.TEST_PG_PREPARED_STATEMENTS;
  return prepared ? { pgPreparedStatements: prepared === 'on' } : {};
}

/**
 * A fresh app on a fresh database, as it ships (same buildApp), with one token per scope. The
 * database is a new SQLite file, or in the postgres test project a new PostgreSQL schema.
 */
export async function buildTestApp(
  overrides: Partial<Config> = {},
  /** Runs before the app is ready, e.g. to add a route that exercises the error handler. */
  beforeReady?: (app: FastifyInstance) => void,
  /** Receives every log entry the app writes (at debug level and above), e.g. to wait for one. */
  onLog?: (entry: LogEntry) => void,
): Promise<TestContext> {
  const database = await freshDatabase();
  const config = makeConfig({
    databaseUrl: database.url,
    logLevel: 'silent',
    adminToken: ADMIN_TOKEN,
    rateLimitPerMinute: 0,
    // npm run test:scale runs the conformance through PgBouncer with named statements on and off.
    ...runSettings(),
    ...overrides,
  });
  let app: FastifyInstance;
  try {
    const logger = onLog && { level: 'debug', stream: { write: (line: string) => onLog(JSON.parse(line) as LogEntry) } };
    app = await buildApp(config, logger ? { logger } : {});
    beforeReady?.(app);
    await app.ready();
  } catch (err) {
    await database.drop();
    throw err;
  }
  const make = async (scope: string) => {
    const res = await app.inject({
      method: 'POST',
      url: '/tokens',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { scopes: [scope], name: `test ${scope}` },
    });
    if (res.statusCode !== 201) throw new Error(`token setup failed: ${res.statusCode} ${res.body}`);
    return res.json<{ token: string }>().token;
  };
  const tokens = { read: await make('read'), write: await make('write'), admin: await make('admin') };
  return {
    app,
    config,
    tokens,
    async close() {
      await app.close();
      await database.drop();
    },
  };
}

/** Apps on one fresh database, one per entry of `each` (its settings over the shared ones), and how to close them all. */
export interface SharedDatabase {
  database: TestDatabase;
  apps: FastifyInstance[];
  close(): Promise<void>;
}

/**
 * The settings of an instance a test builds on `databaseUrl` beside others: silent, the test admin
 * token, no rate limit, no response cache, the run's settings; then `overrides`.
 */
export function instanceConfig(databaseUrl: string, overrides: Partial<Config> = {}): Config {
  return makeConfig({
    ...runSettings(),
    databaseUrl,
    logLevel: 'silent',
    adminToken: ADMIN_TOKEN,
    rateLimitPerMinute: 0,
    responseCacheBytes: 0,
    ...overrides,
  });
}

/**
 * Several instances of the service on one fresh database (e.g. the users index on in one and off in
 * the other), built in order and ready (each awaits `ready()` before the next is built: the first
 * migrates), each with instanceConfig and `each[i]`. Apps are closed in reverse order, then the database dropped.
 */
export async function appsOnOneDatabase(...each: Partial<Config>[]): Promise<SharedDatabase> {
  const database = await freshDatabase();
  const apps: FastifyInstance[] = [];
  const close = async () => {
    for (const app of [...apps].reverse()) await app.close();
    await database.drop();
  };
  try {
    for (const overrides of each) {
      const app = await buildApp(instanceConfig(database.url, overrides));
      apps.push(app);
      await app.ready();
    }
  } catch (err) {
    await close();
    throw err;
  }
  return { database, apps, close };
}

/** A seeded random source (mulberry32: small, good enough to pick cases); a failing run names its seed. */
export function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  const chance = (p: number) => next() < p;
  return { next, int, pick, chance };
}
export type Seeded = ReturnType<typeof seeded>;

/** One line of the app's JSON log (pino): the message, its level and the fields logged with it. */
export type LogEntry = { level: number; msg: string; reqId?: string } & Record<string, unknown>;

/** A promise and the function that resolves it: a barrier a test opens when an event happens. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Runs `before` with an instant `ms` ahead (a token's expires_at), for what must happen before that
 * instant, and runs it again with an instant twice as far ahead while it fails after the clock has
 * passed its instant (a 401 or an ended stream is then the expiry's, not a fault). A failure with the
 * instant still ahead is the test's failure. A loaded machine may take more runs, not fail the test.
 */
export async function beforeInstant<T>(ms: number, before: (instant: number) => Promise<T>): Promise<{ instant: number; value: T }> {
  for (let ahead = ms; ; ahead *= 2) {
    const instant = Date.now() + ahead;
    try {
      return { instant, value: await before(instant) };
    } catch (err) {
      // Six runs, the last 32 times as far ahead: a failure that follows the instant out is no expiry's.
      if (Date.now() < instant || ahead >= 32 * ms) throw err;
    }
  }
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

/**
 * A small client over app.inject that sends a bearer token. `asWritten`, for answers holding values
 * written outside the API (docs/stored-data.md): those are outside the document by definition (it
 * states what the API writes), so the answer is checked against it with them put back as the API
 * wrote them; the test checks the stored values itself.
 */
export function client(app: FastifyInstance, token?: string, { asWritten }: { asWritten?: (body: unknown) => unknown } = {}) {
  const send = (method: Method, url: string, payload?: unknown, headers: Record<string, string> = {}) => {
    const opts: InjectOptions = {
      method,
      url,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    };
    if (payload !== undefined) opts.payload = payload as InjectOptions['payload'];
    return app.inject(opts).then((res) => {
      // Every answer a test receives is also checked against the OpenAPI document the app serves
      // (status documented, headers a client reads documented, body matching), so the document cannot drift.
      const checked = asWritten ? (Object.create(res, { json: { value: () => asWritten(res.json()) } }) as typeof res) : res;
      const problems = answerProblems(app, method, url, checked);
      if (problems.length > 0) throw new Error(`the answer disagrees with the OpenAPI document:\n${problems.join('\n')}`);
      return res;
    });
  };
  return {
    get: (url: string, headers?: Record<string, string>) => send('GET', url, undefined, headers),
    post: (url: string, body?: unknown, headers?: Record<string, string>) => send('POST', url, body, headers),
    put: (url: string, body?: unknown, headers?: Record<string, string>) => send('PUT', url, body, headers),
    patch: (url: string, body?: unknown, headers?: Record<string, string>) => send('PATCH', url, body, headers),
    delete: (url: string, headers?: Record<string, string>) => send('DELETE', url, undefined, headers),
    send,
  };
}

export type Client = ReturnType<typeof client>;

/** Asserts the standard error body and returns it. */
export function errorBody(res: LightMyRequestResponse): { code: string; message: string; details?: Record<string, string>[] } {
  const body = res.json<{ code: string; message: string; details?: Record<string, string>[] }>();
  if (typeof body.code !== 'string' || typeof body.message !== 'string' || !/^[A-Z_]+$/.test(body.code)) {
    throw new Error(`not the standard error body: ${res.body}`);
  }
  return body;
}

// Small factories: data goes in through the API, as a client would write it.
export async function createArtist(api: Client, name = 'Radiohead', image = 'https://img.example.com/radiohead.jpg') {
  const res = await api.post('/artists', { name, image });
  if (res.statusCode !== 201) throw new Error(`createArtist: ${res.statusCode} ${res.body}`);
  return res.json<{ id: number; name: string; image: string }>();
}

export async function createAlbum(api: Client, artistId: number, name = 'OK Computer', year = 1997, image = 'https://img.example.com/okc.jpg') {
  const res = await api.post(`/artists/${artistId}/albums`, { name, year, image });
  if (res.statusCode !== 201) throw new Error(`createAlbum: ${res.statusCode} ${res.body}`);
  return res.json<{ id: number; name: string; year: number; image: string }>();
}

export async function createSong(api: Client, artistId: number, albumId: number, name = 'Airbag', time = '04:44') {
  const res = await api.post(`/artists/${artistId}/albums/${albumId}/songs`, { name, time });
  if (res.statusCode !== 201) throw new Error(`createSong: ${res.statusCode} ${res.body}`);
  return res.json<{ id: number; name: string; time: string }>();
}

/**
 * Every statement the app's PostgreSQL connections send passes through `around(text, run)`, which
 * runs it (`run()`) when and as it likes: pg.Client's query, wrapped until the returned function
 * restores it. Install it before the app is built: each connection binds the method it finds when
 * it is made. `run()` gives a promise of the statement's result.
 */
export function watchPgStatements(around: (text: string, run: () => unknown) => unknown): () => void {
  // Called only with the client as `this` (apply below).
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string };
    const text = typeof config === 'string' ? config : (config?.text ?? '');
    return around(text, () => {
      const result = (original as (...a: unknown[]) => unknown).apply(this, args);
      // A query object (a named statement's, db/connect.ts): pg returns the object itself; `run()` gives its result as a promise, as for a text.
      const query = config as { submit?: unknown; callback?: (err: Error | null, res?: unknown) => void };
      if (result !== query || typeof query.submit !== 'function') return result;
      return new Promise((resolve, reject) => {
        const callback = query.callback;
        query.callback = (err, res) => {
          callback?.(err, res);
          if (err) reject(err);
          else resolve(res);
        };
      });
    });
  } as typeof original;
  return () => {
    pg.Client.prototype.query = original;
  };
}
