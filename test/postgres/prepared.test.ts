import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, client, createArtist, type TestContext } from '../helpers.js';
import { storedName } from '../../src/db/collation.js';
import { forgetLists } from '../../src/query/list/page.js';

// PostgreSQL: a query text the service repeats runs as a named prepared statement, planned once per
// connection (db/connect.ts); PG_PREPARED_STATEMENTS=off sends every query unnamed. One pooled
// connection, so the session that answered the requests is the one asked.

const preparedOnSession = async (ctx: TestContext) =>
  (await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(ctx.app.db)).rows.map((r) => r.statement);

let ctx: TestContext | undefined;
afterEach(async () => {
  await ctx?.close();
  ctx = undefined;
});

describe('prepared statements on PostgreSQL', () => {
  it('names a repeated query, which then answers as before', async () => {
    ctx = await buildTestApp({ pgPoolSize: 1 });
    const api = client(ctx.app, ctx.tokens.read);
    const artist = await createArtist(client(ctx.app, ctx.tokens.write), 'Prepared');
    for (let i = 0; i < 3; i++) {
      const res = await api.get(`/artists/${artist.id}`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ name: 'Prepared', image: artist.image });
    }
    const statements = await preparedOnSession(ctx);
    expect(statements.some((s) => /from "artists"/.test(s))).toBe(true);
    expect(statements.some((s) => /from "tokens"/.test(s))).toBe(true);
  });

  it('plans a page statement once: after its first runs PostgreSQL keeps one plan for every page, not a plan per window', async () => {
    ctx = await buildTestApp({ pgPoolSize: 1 });
    const api = client(ctx.app, ctx.tokens.read);
    const artists = Array.from({ length: 3000 }, (_, n) => {
      const { name, name_key } = storedName(`Planned ${n % 700}`);
      return sql`(${name}, ${name_key}, ${'https://img.example.com/a.jpg'})`;
    });
    await sql`insert into artists (name, name_key, image) values ${sql.join(artists)}`.execute(ctx.app.db);
    await sql`analyze artists`.execute(ctx.app.db);
    for (let page = 1; page <= 12; page++) {
      // Nothing remembered (page boundaries, totals): every page is the same statement, read by its offset.
      forgetLists(ctx.app.db);
      const res = await api.get(`/artists?sort=name:desc&page=${page}&size=25`);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toHaveLength(25);
    }
    const { rows } = await sql<{ statement: string; generic_plans: number; custom_plans: number }>`
      select statement, generic_plans::int, custom_plans::int from pg_prepared_statements
      where statement like '%from "artists"%order by "name_key" desc%'`.execute(ctx.app.db);
    expect(rows).toHaveLength(1);
    // Named on its second run: 11 runs, the first five planned for their values, then the generic plan.
    expect(rows[0]!, rows[0]!.statement).toMatchObject({ custom_plans: 5, generic_plans: 6 });
  });

  it('prepares nothing with PG_PREPARED_STATEMENTS=off', async () => {
    ctx = await buildTestApp({ pgPoolSize: 1, pgPreparedStatements: false });
    const api = client(ctx.app, ctx.tokens.read);
    const artist = await createArtist(client(ctx.app, ctx.tokens.write), 'Unprepared');
    for (let i = 0; i < 3; i++) expect((await api.get(`/artists/${artist.id}`)).statusCode).toBe(200);
    expect(await preparedOnSession(ctx)).toEqual([]);
  });
});
