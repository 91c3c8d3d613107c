import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { seed } from '../../src/cli/seed.js';
import { freshDatabase, type TestDatabase } from '../database.js';
import { buildTestApp, client, type Client, type TestContext } from '../helpers.js';
import { cliIo } from '../cli/io.js';

// The bench's PostgreSQL dataset is loaded by `music-catalogue seed`, after the migrations: its pages
// of users are filled to the table's fillfactor (90, migration 20261127T0100), so a PATCH of a seeded
// user's status and/or age, which changes no indexed column, finds room for the new row version on
// the row's own page and is a HOT update (no entry in any of the table's indexes, no new page; issue
// 32). With pages filled whole, each such PATCH moved its row to another page and wrote an entry into
// every index of users (13), with their full-page images: ~87 kB of WAL an update instead of ~8 kB
// (bench/README.md).

let database: TestDatabase;
let ctx: TestContext;
let api: Client;
let db: Kysely<unknown>;

beforeAll(async () => {
  database = await freshDatabase('postgres');
  const io = cliIo({ databaseUrl: database.url });
  expect(await seed.run(['--users', '2000', '--artists', '1', '--albums-per-artist', '1', '--songs-per-album', '1'], io.ctx)).toBe(0);
  // One pooled connection: the PATCHes' UPDATEs and the statistics' flush and read below all run in
  // the same backend, so its counts are flushed when asked (pg_stat_force_next_flush).
  ctx = await buildTestApp({ databaseUrl: database.url, pgPoolSize: 1 });
  api = client(ctx.app, ctx.tokens.admin);
  db = ctx.app.db as unknown as Kysely<unknown>;
});
afterAll(async () => {
  await ctx?.close();
  await database?.drop();
});

/** This backend's updates of users so far, and how many of them were HOT. */
async function counts(): Promise<{ upd: number; hot: number }> {
  // This backend's own counts are flushed at its next idle moment, which comes before the next statement.
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ upd: string; hot: string }>`
    select n_tup_upd as upd, n_tup_hot_upd as hot from pg_stat_user_tables where relid = 'users'::regclass`.execute(db);
  return { upd: Number(rows[0]!.upd), hot: Number(rows[0]!.hot) };
}

describe('a PATCH of a seeded user on PostgreSQL', () => {
  it("of status and/or age is a HOT update, on the page the seed filled, for users spread over the table's pages", async () => {
    // Users spread over the table, each the first one PATCHed on its page (a row another PATCH moved
    // away leaves room for the next once its page is pruned), on pages the seed filled (the last page
    // may be partly empty; the others are full to the fillfactor).
    const { rows: pages } = await sql<{ pages: number }>`select (pg_relation_size('users') / current_setting('block_size')::int)::int as pages`.execute(db);
    expect(pages[0]!.pages).toBeGreaterThan(10);
    const { rows: users } = await sql<{ id: number; ctid: string }>`
      select id, ctid::text as ctid from users where id in (1, 500, 1000, 1500, 1999) order by id`.execute(db);
    expect(users).toHaveLength(5);
    const page = (ctid: string) => ctid.slice(1, ctid.indexOf(','));
    expect(new Set(users.map((r) => page(r.ctid))).size).toBe(5);
    const bodies = [{ status: 'inactive' }, { age: 101 }, { status: 'active', age: 7 }, { status: 'inactive', age: 33 }, { age: 64 }];
    const before = await counts();
    for (const [i, user] of users.entries()) {
      const res = await api.patch(`/users/${user.id}`, bodies[i]);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject(bodies[i]!);
    }
    const after = await counts();
    expect({ updates: after.upd - before.upd, hot: after.hot - before.hot }).toEqual({ updates: 5, hot: 5 });
    // Each row's new version on its own page.
    const { rows: moved } = await sql<{ id: number; ctid: string }>`
      select id, ctid::text as ctid from users where id in (1, 500, 1000, 1500, 1999) order by id`.execute(db);
    expect(moved.map((r) => page(r.ctid))).toEqual(users.map((r) => page(r.ctid)));
  });
});
