import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import { buildTestApp, client, type Client, type TestContext } from '../helpers.js';
import { foldSummaries, vacuumDeltas } from '../../src/db/summary-folder.js';

// PostgreSQL's users summaries are their folded rows and a delta the writers append to (migration
// 20261126T0300). Totals, a sort by a summary column read one value at a time, and name prefixes are
// exact with a delta not folded yet (the folder kept out by holding its lock here), including keys the
// folded rows do not have (a country no user had), and the same once it is folded.

let ctx: TestContext;
let api: Client;
let db: Kysely<unknown>;
let locker: pg.Client;

// With the users index off, lists are answered by SQL and the held summary (query/held-summary.ts),
// which is what reads the summaries; with it on (the default), by the index where it can.
describe.each([false, true])('usersIndex %s', (usersIndex) => {
  beforeAll(async () => {
    ctx = await buildTestApp({ usersIndex });
    api = client(ctx.app, ctx.tokens.admin);
    db = ctx.app.db as unknown as Kysely<unknown>;
    locker = new pg.Client({ connectionString: ctx.config.databaseUrl });
    await locker.connect();
  });
  afterAll(async () => {
    await locker.end();
    await ctx.close();
  });

  const URLS = [
    '/users?size=1',
    '/users?status=active&size=1',
    '/users?lives_in=atlantis&size=1',
    '/users?lives_in=peru&older_than=30&size=1',
    '/users?first_name_starts_with=Zo&size=1',
    '/users?sort=country:asc,id:asc&size=100',
    '/users?sort=age:desc,id:asc&page=2&size=3',
  ];

  /** Every URL's total and ids, and what SQL counts for the totals. */
  async function answers(): Promise<{ url: string; total: string | undefined; ids: number[] }[]> {
    const out = [];
    for (const url of URLS) {
      const res = await api.get(url);
      expect(res.statusCode).toBe(200);
      out.push({ url, total: res.headers['x-total-count'] as string | undefined, ids: res.json<{ id: number }[]>().map((u) => u.id) });
    }
    return out;
  }

  async function counted(): Promise<Record<string, string>> {
    const n = async (where: string) => String((await sql<{ n: string }>`select count(*) as n from users where ${sql.raw(where)}`.execute(db)).rows[0]!.n);
    return {
      '/users?size=1': await n('true'),
      '/users?status=active&size=1': await n(`status = 'active'`),
      '/users?lives_in=atlantis&size=1': await n(`country_fold = 'atlantis'`),
      '/users?lives_in=peru&older_than=30&size=1': await n(`country_fold = 'peru' and age > 30`),
      '/users?first_name_starts_with=Zo&size=1': await n(`first_name like 'Zo%'`),
    };
  }

  async function deltaRows(): Promise<number> {
    const { rows } = await sql<{ n: string }>`select (select count(*) from users_counts_delta) + (select count(*) from users_name_counts_delta) as n`.execute(
      db,
    );
    return Number(rows[0]!.n);
  }

  describe('users totals with a delta not folded yet (PostgreSQL)', () => {
    it('are exact before and after the fold, new keys included', async () => {
      for (const [i, country] of ['Peru', 'peru', 'Chile'].entries()) {
        const res = await api.post('/users', {
          first_name: `Ann${i}`,
          last_name: 'Old',
          email: `old${i}-${usersIndex}@example.com`,
          age: 30 + i,
          status: 'active',
          country,
        });
        expect(res.statusCode).toBe(201);
      }
      // Folded: the delta starts empty.
      while ((await foldSummaries(db)) === undefined);
      expect(await deltaRows()).toBe(0);

      await locker.query('select pg_advisory_lock(3200032, hashtext(current_schema()))');
      try {
        const made = [];
        for (const [i, [first, country, age]] of [
          ['Zoe', 'Atlantis', 44],
          ['Zola', 'ATLANTIS', 45],
          ['Bob', 'Peru', 31],
        ].entries()) {
          const res = await api.post('/users', {
            first_name: first,
            last_name: 'New',
            email: `new${i}-${usersIndex}@example.com`,
            age,
            status: 'inactive',
            country,
          });
          expect(res.statusCode).toBe(201);
          made.push(res.json<{ id: number }>().id);
        }
        expect((await api.patch(`/users/${made[2]}`, { age: 55, status: 'active' })).statusCode).toBe(200);
        expect((await api.delete(`/users/${made[1]}`)).statusCode).toBe(204);
        expect(await foldSummaries(db)).toBeUndefined(); // the lock is held: nothing folded
        expect(await deltaRows()).toBeGreaterThan(0);

        const before = await answers();
        const want = await counted();
        for (const a of before) if (want[a.url] !== undefined) expect(a.total, a.url).toBe(want[a.url]);
        expect(before.find((a) => a.url === '/users?lives_in=atlantis&size=1')!.total).toBe('1');
        const byCountry = await sql<{ id: number }>`select id from users order by country_key, id`.execute(db);
        expect(before.find((a) => a.url.startsWith('/users?sort=country'))!.ids).toEqual(byCountry.rows.map((r) => Number(r.id)));

        await locker.query('select pg_advisory_unlock(3200032, hashtext(current_schema()))');
        while ((await foldSummaries(db)) === undefined);
        expect(await deltaRows()).toBe(0);
        // What the folder does next: the deleted rows vacuumed, then (writes stopped) the tables shrunk.
        await vacuumDeltas(db, false);
        await vacuumDeltas(db, true);
        // A write moves the version, so the answers are read again, from the folded rows alone now.
        expect((await api.patch(`/users/${made[0]}`, { last_name: 'Folded' })).statusCode).toBe(200);
        expect(await answers()).toEqual(before);
      } finally {
        await locker.query('select pg_advisory_unlock_all()');
      }
    });
  });
});
