import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { buildTestApp, client, errorBody, type Client, type TestContext } from '../helpers.js';

// PostgreSQL: concurrent PATCHes of users (without If-Match) that set the same fields are written as
// one UPDATE, one transaction (db/pg-batch.ts UpdateBatcher). Rows written by one statement share
// their transaction id (xmin), which is what shows a batch here; each caller still gets its own row,
// its own ETag, and the answer a PATCH alone would get (404, 409).

let ctx: TestContext;
let api: Client;
let n = 0;

async function createUser(over: Record<string, unknown> = {}) {
  const body = { first_name: 'Ana', last_name: 'Silva', email: `batch${++n}@example.com`, age: 30, status: 'active', country: 'Brazil', ...over };
  const res = await api.post('/users', body);
  if (res.statusCode !== 201) throw new Error(`createUser: ${res.statusCode} ${res.body}`);
  return res.json<{ id: number; email: string } & Record<string, unknown>>();
}

const xminOf = async (ids: number[]) =>
  (await sql<{ id: number; tx: string }>`select id, xmin::text as tx from users where id in (${sql.join(ids)})`.execute(ctx.app.db)).rows;

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.admin);
});
afterAll(() => ctx.close());

describe('PATCH /users/{id} on PostgreSQL (batched writes)', () => {
  it('writes concurrent PATCHes of distinct users in fewer transactions than users, each answered with its own row and ETag', async () => {
    const users: Awaited<ReturnType<typeof createUser>>[] = [];
    for (let i = 0; i < 30; i++) users.push(await createUser());
    const answers = await Promise.all(users.map((u, i) => api.patch(`/users/${u.id}`, { age: 40 + i, status: i % 2 ? 'inactive' : 'active' })));
    answers.forEach((res, i) => {
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ...users[i], age: 40 + i, status: i % 2 ? 'inactive' : 'active' });
      expect(res.headers.etag).toBe(`"user-${users[i]!.id}-v2"`);
    });
    for (const [i, u] of users.entries()) expect((await api.get(`/users/${u.id}`)).json()).toMatchObject({ age: 40 + i });
    expect(new Set((await xminOf(users.map((u) => u.id))).map((r) => r.tx)).size).toBeLessThan(users.length);
    // The totals the triggers keep (summed once per batch) still match the rows.
    const total = (await api.get('/users?status=inactive&size=1')).headers['x-total-count'];
    const { rows } = await sql<{ n: string }>`select count(*) as n from users where status = 'inactive'`.execute(ctx.app.db);
    expect(Number(total)).toBe(Number(rows[0]!.n));
  });

  it('applies every one of concurrent PATCHes of one user, each on the version the one before left', async () => {
    const u = await createUser();
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => api.patch(`/users/${u.id}`, { age: 60 + i })));
    expect(answers.map((res) => res.statusCode)).toEqual([200, 200, 200, 200, 200, 200]);
    // One statement updates a row once: two of them in one batch would be answered with one version.
    const versions = answers.map((res) => Number(/-v(\d+)"$/.exec(res.headers.etag as string)![1]));
    expect([...versions].sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7]);
    answers.forEach((res, i) => expect(res.json<{ age: number }>().age).toBe(60 + i));
    const last = answers[versions.indexOf(7)]!.json<{ age: number }>();
    const now = await api.get(`/users/${u.id}`);
    expect(now.headers.etag).toBe(`"user-${u.id}-v7"`);
    expect(now.json()).toEqual(last);
  });

  it('a PATCH that fails in a batch fails alone (409, 404); the others are written', async () => {
    const taken = await createUser();
    const users: Awaited<ReturnType<typeof createUser>>[] = [];
    for (let i = 0; i < 8; i++) users.push(await createUser());
    const answers = await Promise.all([
      ...users.map((u, i) => api.patch(`/users/${u.id}`, { email: i === 3 ? taken.email.toUpperCase() : `moved${n}-${i}@example.com` })),
      api.patch('/users/999999', { email: `nobody${n}@example.com` }),
    ]);
    answers.slice(0, users.length).forEach((res, i) => {
      if (i === 3) {
        expect(res.statusCode).toBe(409);
        expect(errorBody(res)).toEqual({ code: 'CONFLICT', message: 'A user with this email already exists.' });
      } else {
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({ ...users[i], email: `moved${n}-${i}@example.com` });
      }
    });
    expect(answers.at(-1)!.statusCode).toBe(404);
    expect(errorBody(answers.at(-1)!)).toEqual({ code: 'NOT_FOUND', message: 'User not found.' });
    expect((await api.get(`/users/${users[3]!.id}`)).json().email).toBe(users[3]!.email);
  });

  it('a user another transaction holds delays only its own PATCH, not the others of its batch', async () => {
    const held = await createUser();
    const others: Awaited<ReturnType<typeof createUser>>[] = [];
    for (let i = 0; i < 10; i++) others.push(await createUser());
    const holder = new pg.Client({ connectionString: ctx.config.databaseUrl });
    const watcher = new pg.Client({ connectionString: ctx.config.databaseUrl });
    await holder.connect();
    await watcher.connect();
    /** The statements waiting on the holder's transaction. */
    const waiting = async (pid: number) =>
      (await watcher.query<{ query: string }>('select query from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [pid])).rows.map((r) => r.query);
    try {
      const pid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      await holder.query('begin');
      await holder.query('update users set age = 99 where id = $1', [held.id]);
      // Sent together, the held user last: it shares a batch with others.
      const answers = others.map((u) => api.patch(`/users/${u.id}`, { age: 70 }));
      const heldAnswer = api.patch(`/users/${held.id}`, { age: 71 });
      let settled = false;
      const all = Promise.all(answers).finally(() => (settled = true));
      // Until the others are answered: no batch statement (a multi-row UPDATE) may wait on the holder.
      let batchWaiting: string[] = [];
      while (!settled && batchWaiting.length === 0) batchWaiting = (await waiting(pid)).filter((q) => q.includes('json_populate_recordset'));
      if (batchWaiting.length > 0) await holder.query('rollback');
      expect(batchWaiting).toEqual([]);
      for (const res of await all) {
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ age: 70 });
      }
      // The held user's PATCH waits for the holder alone, and goes on once it commits.
      while ((await waiting(pid)).length === 0);
      await holder.query('commit');
      const res = await heldAnswer;
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ...held, age: 71 });
      expect(res.headers.etag).toBe(`"user-${held.id}-v2"`);
    } finally {
      await holder.query('rollback').catch(() => {});
      await holder.end();
      await watcher.end();
    }
  });
});
