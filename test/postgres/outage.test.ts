import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRows, freshDatabase, type TestDatabase } from '../database.js';
import { buildTestApp, client, createArtist, errorBody, type TestContext } from '../helpers.js';
import { startProxy, type Proxy } from './proxy.js';

// The app reaches PostgreSQL through a proxy the test cuts and restores, as a network or a
// database restart would. No restart of the app anywhere in this file.

let database: TestDatabase;
let proxy: Proxy;
let ctx: TestContext;
let artistId: number;

const CONNECT_TIMEOUT_MS = 500;
const APP_NAME = `mc-outage-${process.pid}`;

beforeAll(async () => {
  database = await freshDatabase('postgres');
  const target = new URL(database.url);
  proxy = await startProxy(target.hostname, Number(target.port || 5432));
  const viaProxy = new URL(database.url);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  // Its own name, so terminating "the service's connections" below spares other test files' apps.
  viaProxy.searchParams.set('application_name', APP_NAME);
  ctx = await buildTestApp({ databaseUrl: viaProxy.toString(), pgConnectTimeoutMs: CONNECT_TIMEOUT_MS });
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

async function expectUnavailable(url: string, token?: string) {
  const [res, ms] = await timed(() => client(ctx.app, token).get(url));
  expect(res.statusCode).toBe(503);
  expect(errorBody(res).code).toBe('SERVICE_UNAVAILABLE');
  expect(res.headers['retry-after']).toBe('1');
  expect(res.body).not.toMatch(/ECONN|postgres|127\.0\.0\.1/i);
  return ms;
}

async function expectServing() {
  const ready = await client(ctx.app).get('/ready');
  expect(ready.statusCode).toBe(200);
  const res = await client(ctx.app, ctx.tokens.read).get(`/artists/${artistId}`);
  expect(res.statusCode).toBe(200);
  expect(res.json()).toEqual({ name: 'Can', image: 'https://img.example.com/radiohead.jpg' });
}

describe('while PostgreSQL refuses connections', () => {
  it('answers 503 SERVICE_UNAVAILABLE at once, /ready says not ready, and recovers by itself', async () => {
    await expectServing();
    proxy.set('down');
    expect(await expectUnavailable(`/artists/${artistId}`, ctx.tokens.read)).toBeLessThan(1000);
    expect(await expectUnavailable('/ready')).toBeLessThan(1000);
    const write = await client(ctx.app, ctx.tokens.write).post('/artists', { name: 'Lost?', image: 'https://img.example.com/l.jpg' });
    expect(write.statusCode).toBe(503);
    proxy.set('up');
    await expectServing();
  });
});

describe('while the network to PostgreSQL drops packets', () => {
  it('answers 503 after the connect timeout instead of hanging, then recovers', async () => {
    proxy.set('blackhole');
    // Pooled connections die with the cut (fast 503); the timing below is for a new connection.
    await client(ctx.app).get('/ready');
    const ms = await expectUnavailable(`/artists/${artistId}`, ctx.tokens.read);
    expect(ms).toBeGreaterThanOrEqual(CONNECT_TIMEOUT_MS - 50);
    expect(ms).toBeLessThan(CONNECT_TIMEOUT_MS * 4);
    await expectUnavailable('/ready');
    proxy.set('up');
    await expectServing();
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
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) statuses.push((await client(ctx.app, ctx.tokens.read).get(`/artists/${artistId}`)).statusCode);
    expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
    expect(statuses.slice(-2)).toEqual([200, 200]);
    await expectServing();
  });
});

describe('while every pooled connection is busy (the database reachable, only slow)', () => {
  it('queues a request behind them for longer than the connect timeout instead of answering 503', async () => {
    const busy = await buildTestApp({ databaseUrl: database.url, pgPoolSize: 1, pgConnectTimeoutMs: 200 });
    try {
      const id = (await createArtist(client(busy.app, busy.tokens.write), 'Neu!')).id;
      // The pool's only connection, held for 800 ms: four times the connect timeout.
      const held = busy.app.db.connection().execute(() => new Promise((resolve) => setTimeout(resolve, 800)));
      await new Promise((resolve) => setTimeout(resolve, 20));
      const [res, ms] = await timed(() => client(busy.app, busy.tokens.read).get(`/artists/${id}`));
      await held;
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ name: 'Neu!', image: 'https://img.example.com/radiohead.jpg' });
      expect(ms).toBeGreaterThanOrEqual(600);
    } finally {
      await busy.close();
    }
  });
});
