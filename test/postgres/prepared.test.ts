import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, client, createArtist, type TestContext } from '../helpers.js';

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

  it('prepares nothing with PG_PREPARED_STATEMENTS=off', async () => {
    ctx = await buildTestApp({ pgPoolSize: 1, pgPreparedStatements: false });
    const api = client(ctx.app, ctx.tokens.read);
    const artist = await createArtist(client(ctx.app, ctx.tokens.write), 'Unprepared');
    for (let i = 0; i < 3; i++) expect((await api.get(`/artists/${artist.id}`)).statusCode).toBe(200);
    expect(await preparedOnSession(ctx)).toEqual([]);
  });
});
