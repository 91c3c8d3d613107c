import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { ADMIN_TOKEN, appsOnOneDatabase, client, type SharedDatabase } from '../helpers.js';
import { backend } from '../database.js';
import { collationKey, foldOfKey } from '../../src/db/collation.js';

// Every id the service hands out can be fetched back through the API, whatever rows were written by
// hand (psql, sqlite3) beside it. An id past 2147483647 (what a path takes, and PostgreSQL's int4) is
// refused when written, on SQLite too: AUTOINCREMENT would otherwise number every later row after it.
// An id written by hand ahead of PostgreSQL's identity sequence is passed by the next insert that
// meets it, not answered 409. No row written by hand is lost.

describe(`ids the service assigns beside rows written by hand (${backend})`, () => {
  let shared: SharedDatabase;
  let app: FastifyInstance;
  let n = 0;
  const user = () => ({ first_name: 'I', last_name: 'D', email: `id${++n}@example.com`, age: 30, status: 'active', country: 'Chile' });
  const row = (id: number) => {
    const u = user();
    const country_key = collationKey(u.country);
    return {
      ...u,
      id,
      first_name_key: collationKey(u.first_name),
      last_name_key: collationKey(u.last_name),
      country_key,
      country_fold: foldOfKey(country_key),
    };
  };

  beforeAll(async () => {
    shared = await appsOnOneDatabase({});
    app = shared.apps[0]!;
  });
  afterAll(() => shared?.close());

  it('an id past 2^31 is refused when written by hand, and the next ids stay fetchable', async () => {
    const api = client(app, ADMIN_TOKEN);
    const first = await api.post('/users', user());
    expect(first.statusCode).toBe(201);
    await expect(app.db.insertInto('users').values(row(3_000_000_000)).execute()).rejects.toThrow(/out of range/);
    const id = first.json<{ id: number }>().id;
    await expect(sql`update users set id = 2147483648 where id = ${id}`.execute(app.db)).rejects.toThrow(/out of range/);
    await expect(
      sql`insert into artists (id, name, image, name_key) values (2147483648, 'A', 'https://x.example/a.png', ${collationKey('A')})`.execute(app.db),
    ).rejects.toThrow(/out of range/);
    expect((await sql<{ n: number }>`select cast(count(*) as integer) as n from artists`.execute(app.db)).rows[0]!.n).toEqual(0);
    for (const body of [[user()], user()]) {
      const res = await api.post('/users', body);
      expect(res.statusCode, res.body).toBe(201);
      const created = res.json<{ id: number } | { id: number }[]>();
      for (const u of Array.isArray(created) ? created : [created]) {
        expect(u.id).toBeLessThanOrEqual(2147483647);
        const back = await api.get(`/users/${u.id}`);
        expect(back.statusCode, back.body).toBe(200);
        expect(back.json()).toEqual(u);
      }
    }
    expect((await api.get('/users?size=100')).headers['x-total-count']).toBe('3');
  });

  it('ids written by hand ahead of the sequence: the next creates pass them, every row kept', async () => {
    const api = client(app, ADMIN_TOKEN);
    const res = await api.post('/users', user());
    expect(res.statusCode).toBe(201);
    const last = res.json<{ id: number }>().id;
    const handIds = [last + 1, last + 2, last + 4];
    await app.db.insertInto('users').values(handIds.map(row)).execute();
    const made: number[] = [];
    for (const body of [user(), user(), [user(), user()], user()]) {
      const created = await api.post('/users', body);
      expect(created.statusCode, created.body).toBe(201);
      const json = created.json<{ id: number } | { id: number }[]>();
      made.push(...(Array.isArray(json) ? json : [json]).map((u) => u.id));
      if (!Array.isArray(json)) expect(created.headers.location).toBe(`/users/${json.id}`);
    }
    // Tokens and artists too.
    const lastArtist = (await api.post('/artists', { name: 'A', image: 'https://x.example/a.png' })).json<{ id: number }>().id;
    await sql`insert into artists (id, name, image, name_key) values (${lastArtist + 1}, 'B', 'https://x.example/b.png', ${collationKey('B')})`.execute(app.db);
    const artist = await api.post('/artists', { name: 'C', image: 'https://x.example/c.png' });
    expect(artist.statusCode, artist.body).toBe(201);
    expect(artist.json<{ id: number }>().id).not.toBe(lastArtist + 1);
    expect(new Set([...made, ...handIds]).size).toBe(made.length + handIds.length);
    for (const id of [...made, ...handIds]) expect((await api.get(`/users/${id}`)).statusCode).toBe(200);
    for (const id of [lastArtist, lastArtist + 1, artist.json<{ id: number }>().id]) expect((await api.get(`/artists/${id}`)).statusCode).toBe(200);
  });
});
