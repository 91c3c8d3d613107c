import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { freshDatabase, type TestDatabase } from '../database.js';
import { ADMIN_TOKEN, runSettings } from '../helpers.js';
import { openStream } from '../events/sse.js';

// Events take no lock that writers share (issue 32, migration 20261126T0200): a transaction left open
// after writing one user delays no write of another table, on any instance. Its events are numbered
// when it commits, after those published meanwhile, and a reader resuming with after= gets them.

let database: TestDatabase;
const apps: FastifyInstance[] = [];
const urls: string[] = [];
/** Watches the server's lock waits (pg_blocking_pids) from outside the apps. */
let monitor: pg.Client;
const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };

beforeAll(async () => {
  database = await freshDatabase('postgres');
  for (let i = 0; i < 2; i++) {
    const app = await buildApp(
      makeConfig({ databaseUrl: database.url, logLevel: 'silent', adminToken: ADMIN_TOKEN, rateLimitPerMinute: 0, eventsPollMs: 20, ...runSettings() }),
    );
    urls.push(await app.listen({ host: '127.0.0.1', port: 0 }));
    apps.push(app);
  }
  monitor = new pg.Client({ connectionString: database.url });
  await monitor.connect();
});
afterAll(async () => {
  await monitor.end();
  await Promise.all(apps.map((a) => a.close()));
  await database.drop();
});

async function post(base: string, path: string, body: unknown): Promise<{ status: number; body: { id: number } & Record<string, unknown> }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { id: number } & Record<string, unknown> };
}

interface Ev {
  sequence: number;
  type: string;
  path: string;
  resource: Record<string, unknown>;
}

async function feed(base: string, after: number): Promise<{ status: number; events: Ev[]; last: string | null }> {
  const res = await fetch(`${base}/events?after=${after}&size=1000`, { headers });
  return { status: res.status, events: (await res.json()) as Ev[], last: res.headers.get('x-last-sequence') };
}

/** A session of its own (as psql would be) with a transaction open after writing one user. */
async function holdUser(id: number): Promise<{ client: pg.Client; pid: number }> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
  await client.query('begin');
  const updated = await client.query('update users set age = age + 1 where id = $1', [id]);
  expect(updated.rowCount).toBe(1);
  return { client, pid: rows[0]!.pid };
}

/**
 * `work`'s outcome, unless some session comes to wait on `holder` first (pg_blocking_pids, asked again
 * and again until `work` settles): then the holder rolls back, so that `work` can end, and this fails.
 */
async function withoutWaitingOn<T>(holder: { client: pg.Client; pid: number }, work: Promise<T>): Promise<T> {
  let settled = false;
  const watch = (async () => {
    while (!settled) {
      const { rows } = await monitor.query('select pid, query from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [holder.pid]);
      if (rows.length > 0) return rows;
    }
    return undefined;
  })();
  const first = await Promise.race([work.then((value) => ({ value })), watch.then((waiting) => ({ waiting }))]);
  settled = true;
  if ('waiting' in first && first.waiting) {
    await holder.client.query('rollback');
    await work.catch(() => undefined);
    throw new Error(`waited on the open transaction: ${JSON.stringify(first.waiting)}`);
  }
  await watch;
  return (first as { value: T }).value;
}

async function newUser(i: number): Promise<number> {
  const res = await post(urls[0]!, '/users', {
    first_name: 'Held',
    last_name: `U${i}`,
    email: `held${i}@example.com`,
    age: 40,
    status: 'active',
    country: 'Chile',
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

describe('writers on PostgreSQL share no events lock', () => {
  it('lets an artist POST through either instance while another session holds a transaction that wrote a user', async () => {
    const holder = await holdUser(await newUser(1));
    try {
      for (const [i, base] of urls.entries()) {
        const res = await withoutWaitingOn(holder, post(base, '/artists', { name: `Unblocked ${i}`, image: 'https://img.example.com/u.jpg' }));
        expect(res.status).toBe(201);
        expect(res.body).toEqual({ id: res.body.id, name: `Unblocked ${i}`, image: 'https://img.example.com/u.jpg' });
      }
      await holder.client.query('commit');
    } finally {
      await holder.client.end();
    }
  });

  it('numbers the open transaction’s event when it commits, after the events published meanwhile; after= resumes without skipping it', async () => {
    const userId = await newUser(2);
    // The feed's end now, read through the other instance (a reader publishes first: it sees every write acknowledged).
    const start = await feed(urls[1]!, 0);
    expect(start.status).toBe(200);
    const head = start.events.at(-1)!.sequence;
    expect(start.events.at(-1)).toMatchObject({ type: 'user.created', path: `/users/${userId}` });
    const stream = await openStream(`${urls[1]}/events/stream?after=${head}`, ADMIN_TOKEN);
    expect(stream.status).toBe(200);

    const holder = await holdUser(userId);
    let artist: { id: number };
    try {
      const created = await withoutWaitingOn(holder, post(urls[0]!, '/artists', { name: 'Meanwhile', image: 'https://img.example.com/m.jpg' }));
      expect(created.status).toBe(201);
      artist = created.body;
      // Read through the other instance: the artist (acknowledged) is there; the open transaction's event is not.
      const during = await feed(urls[1]!, head);
      expect(during.status).toBe(200);
      expect(during.events.map((e) => [e.sequence, e.type, e.path])).toEqual([[head + 1, 'artist.created', `/artists/${artist.id}`]]);
      expect(during.last).toBe(String(head + 1));
      await holder.client.query('commit');
    } finally {
      await holder.client.end();
    }

    // Resuming after the last sequence seen gets the committed transaction's event, numbered after the artist's.
    const resumed = await feed(urls[0]!, head + 1);
    expect(resumed.status).toBe(200);
    expect(resumed.events.map((e) => [e.sequence, e.type, e.path, e.resource.age])).toEqual([[head + 2, 'user.updated', `/users/${userId}`, 41]]);
    expect(resumed.last).toBe(String(head + 2));
    const whole = await feed(urls[1]!, head);
    expect(whole.events.map((e) => [e.sequence, e.type])).toEqual([
      [head + 1, 'artist.created'],
      [head + 2, 'user.updated'],
    ]);
    // A stream sees the same order, and the second event without any write answered by its instance.
    await stream.until((c) => c.events.length >= 2);
    stream.close();
    expect(stream.events.map((e) => [e.id, e.data.type, e.data.path])).toEqual([
      [String(head + 1), 'artist.created', `/artists/${artist.id}`],
      [String(head + 2), 'user.updated', `/users/${userId}`],
    ]);
  });
});
