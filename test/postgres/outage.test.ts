import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRows, freshDatabase, type TestDatabase } from '../database.js';
import { buildTestApp, client, createArtist, deferred, errorBody, type TestContext } from '../helpers.js';
import { startProxy, type Proxy } from './proxy.js';

// The app reaches PostgreSQL through a proxy the test cuts and restores, as a network or a
// database restart would. No restart of the app anywhere in this file.

let database: TestDatabase;
let proxy: Proxy;
let ctx: TestContext;
let artistId: number;

const APP_NAME = `mc-outage-${process.pid}`;

/** The database URL through the proxy, with an application name of its own. */
function viaProxy(applicationName: string): string {
  const url = new URL(database.url);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  url.searchParams.set('application_name', applicationName);
  return url.toString();
}

beforeAll(async () => {
  database = await freshDatabase('postgres');
  const target = new URL(database.url);
  proxy = await startProxy(target.hostname, Number(target.port || 5432));
  // Its own name, so terminating "the service's connections" below spares other test files' apps.
  // A connect timeout longer than any test here: an answer that comes at all did not wait for it.
  ctx = await buildTestApp({ databaseUrl: viaProxy(APP_NAME), pgConnectTimeoutMs: 60_000 });
  artistId = (await createArtist(client(ctx.app, ctx.tokens.write), 'Can')).id;
});
afterAll(async () => {
  await ctx.close();
  await proxy.close();
  await database.drop();
});

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const result = await run();
  return [result, performance.now() - start];
}

async function expectUnavailable(app: TestContext, url: string, token?: string) {
  const [res, ms] = await timed(() => client(app.app, token).get(url));
  expect(res.statusCode).toBe(503);
  expect(errorBody(res).code).toBe('SERVICE_UNAVAILABLE');
  expect(res.headers['retry-after']).toBe('1');
  expect(res.body).not.toMatch(/ECONN|postgres|127\.0\.0\.1/i);
  return ms;
}

async function expectServing(app = ctx, id = artistId, name = 'Can') {
  const ready = await client(app.app).get('/ready');
  expect(ready.statusCode).toBe(200);
  const res = await client(app.app, app.tokens.read).get(`/artists/${id}`);
  expect(res.statusCode).toBe(200);
  expect(res.json()).toEqual({ name, image: 'https://img.example.com/radiohead.jpg' });
}

describe('while PostgreSQL refuses connections', () => {
  it('answers 503 SERVICE_UNAVAILABLE at once, /ready says not ready, and recovers by itself', async () => {
    await expectServing();
    proxy.set('down');
    // At once: the connect timeout (60 s) is longer than this test may run.
    await expectUnavailable(ctx, `/artists/${artistId}`, ctx.tokens.read);
    await expectUnavailable(ctx, '/ready');
    const write = await client(ctx.app, ctx.tokens.write).post('/artists', { name: 'Lost?', image: 'https://img.example.com/l.jpg' });
    expect(write.statusCode).toBe(503);
    proxy.set('up');
    await expectServing();
  });
});

describe('while the network to PostgreSQL drops packets', () => {
  it('answers 503 after the connect timeout instead of hanging, then recovers', async () => {
    const connectTimeoutMs = 1_000;
    const cut = await buildTestApp({ databaseUrl: viaProxy(`${APP_NAME}-blackhole`), pgConnectTimeoutMs: connectTimeoutMs });
    try {
      const id = (await createArtist(client(cut.app, cut.tokens.write), 'Faust')).id;
      proxy.set('blackhole');
      // Pooled connections die with the cut (fast 503); the timing below is for a new connection.
      await client(cut.app).get('/ready');
      // The blackhole never answers, so an answer at all is the connect timeout's; it cannot come
      // before that timeout (a loaded machine can only make it later).
      expect(await expectUnavailable(cut, `/artists/${id}`, cut.tokens.read)).toBeGreaterThanOrEqual(connectTimeoutMs - 50);
      await expectUnavailable(cut, '/ready');
      proxy.set('up');
      await expectServing(cut, id, 'Faust');
    } finally {
      proxy.set('up');
      await cut.close();
    }
  });
});

describe('when PostgreSQL terminates the service connections (restart, failover)', () => {
  it('replaces them without a restart and without a 500', async () => {
    await expectServing();
    const terminated = await adminRows<{ pid: number }>(
      // Materialized first: in a plain WHERE the planner may call pg_terminate_backend on every row.
      `with mine as materialized (select pid from pg_stat_activity where application_name = '${APP_NAME}')
       select pid, pg_terminate_backend(pid) from mine`,
    );
    expect(terminated.length).toBeGreaterThan(0);
    // A request may land on a connection whose termination is still in flight: 503, never 500.
    // The pool drops a connection once it is found dead and opens a new one, so the answers are 200
    // again after a few requests, however long each takes (a count, not a time, bounds the wait).
    const statuses: number[] = [];
    while (statuses.slice(-2).join() !== '200,200' && statuses.length < 50) {
      statuses.push((await client(ctx.app, ctx.tokens.read).get(`/artists/${artistId}`)).statusCode);
    }
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(statuses.slice(-2)).toEqual([200, 200]);
    await expectServing();
  });
});

describe('while every pooled connection is busy (the database reachable, only slow)', () => {
  it('queues a request behind them for longer than the connect timeout instead of answering 503', async () => {
    const connectTimeoutMs = 250;
    const busy = await buildTestApp({ databaseUrl: database.url, pgPoolSize: 1, pgConnectTimeoutMs: connectTimeoutMs });
    try {
      const id = (await createArtist(client(busy.app, busy.tokens.write), 'Neu!')).id;
      // The pool's only connection, held until the test lets it go.
      const acquired = deferred();
      const release = deferred();
      const held = busy.app.db.connection().execute(async () => {
        acquired.resolve();
        await release.promise;
      });
      await acquired.promise;
      let answered = false;
      const pending = client(busy.app, busy.tokens.read)
        .get(`/artists/${id}`)
        .finally(() => (answered = true));
      // The request is queued for the connection (the pool says so)...
      while (busy.app.connection.poolStats!().waiting === 0) await new Promise((r) => setTimeout(r, 5));
      // ...and stays queued for three connect timeouts: a wait that a slow machine only lengthens.
      await new Promise((r) => setTimeout(r, 3 * connectTimeoutMs));
      expect(answered).toBe(false);
      release.resolve();
      await held;
      const res = await pending;
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ name: 'Neu!', image: 'https://img.example.com/radiohead.jpg' });
    } finally {
      await busy.close();
    }
  });
});
