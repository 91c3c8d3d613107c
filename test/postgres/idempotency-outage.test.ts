import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, postgresServerUrl, type TestDatabase } from '../database.js';
import { buildTestApp, client, errorBody, type TestContext } from '../helpers.js';
import { startProxy, type Proxy } from './proxy.js';

// The database goes away while a keyed POST is inside its write: the request answers 503 and cannot
// free its key (that write fails too). Once the database is back, the retry runs; it does not meet a
// 409 "still being processed" until the key expires. The server-side backend of the lost connection
// finishes the INSERT it was waiting to run once the lock is gone: inside the keyed write's
// transaction, which it then rolls back (the client is gone), so the key still makes one row.

let database: TestDatabase;
let proxy: Proxy;
let ctx: TestContext;

beforeAll(async () => {
  database = await freshDatabase('postgres');
  const target = new URL(database.url);
  proxy = await startProxy(target.hostname, Number(target.port || 5432));
  const viaProxy = new URL(database.url);
  viaProxy.hostname = '127.0.0.1';
  viaProxy.port = String(proxy.port);
  // A short lease, so the retry does not wait the default 45 s for the failed request's to lapse.
  ctx = await buildTestApp({ databaseUrl: viaProxy.toString(), pgConnectTimeoutMs: 500, idempotencyLeaseSeconds: 2 });
});
afterAll(async () => {
  await ctx.close();
  await proxy.close();
  await database.drop();
});

describe('POST with Idempotency-Key while the database goes away', () => {
  it('answers 503, and the retry after the outage runs and is then replayed', async () => {
    const schema = database.schema!;
    const locker = new pg.Client({ connectionString: postgresServerUrl() });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query(`lock table ${schema}.artists in share row exclusive mode`);
      const api = client(ctx.app, ctx.tokens.write);
      const body = { name: 'Outage', image: 'https://img.example.com/o.jpg' };
      const pending = api.post('/artists', body, { 'idempotency-key': 'outage-1' });
      // The event: the key is reserved and the INSERT waits on our lock (in the backend `waiting`).
      let waiting: number | undefined;
      while (waiting === undefined) {
        const { rows } = await locker.query<{ pid: number }>(
          `select l.pid from pg_locks l join pg_class c on c.oid = l.relation
           where c.relname = 'artists' and c.relnamespace = '${schema}'::regnamespace and not l.granted`,
        );
        waiting = rows[0]?.pid;
        if (waiting === undefined) await new Promise((r) => setTimeout(r, 10));
      }
      proxy.set('down');
      const failed = await pending;
      expect(failed.statusCode).toBe(503);
      expect(errorBody(failed).code).toBe('SERVICE_UNAVAILABLE');
      await locker.query('rollback');
      // The event: that backend has ended, its INSERT committed or rolled back for good.
      while ((await locker.query('select 1 from pg_stat_activity where pid = $1', [waiting])).rowCount! > 0) await new Promise((r) => setTimeout(r, 10));
      const { rows } = await locker.query(`select status from ${schema}.idempotency_keys where key = 'outage-1'`);
      expect(rows).toEqual([{ status: null }]); // the key could not be freed: the database was gone
      proxy.set('up');

      const retry = await api.post('/artists', body, { 'idempotency-key': 'outage-1' });
      expect(retry.statusCode).toBe(201);
      const created = retry.json<{ id: number; name: string }>();
      expect(created.name).toBe('Outage');
      expect(retry.headers.location).toBe(`/artists/${created.id}`);
      const again = await api.post('/artists', body, { 'idempotency-key': 'outage-1' });
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json()).toEqual(created);
      const { rows: made } = await locker.query(`select id from ${schema}.artists where name = 'Outage'`);
      expect(made).toEqual([{ id: created.id }]);
    } finally {
      await locker.end();
    }
  });
});
