import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, client, createAlbum, createArtist, createSong, type Client, type TestContext } from '../helpers.js';
import { backend } from '../database.js';
import { collationKey } from '../../src/db/collation.js';

// Catalogue rows written outside the API (psql, sqlite3) with what the API never writes (a year
// outside 1000..9999, a name past 200 characters, a time that is not mm:ss) are answered as stored by
// every read (docs/stored-data.md), not a 500 for failing the answer's schema; each answer is checked
// against the OpenAPI document too. On SQLite, a row stored with an id past 2^31 before such ids were
// refused (migration 20261126T0400) is listed with its id.

let ctx: TestContext;
let api: Client;

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.admin);
});
afterAll(() => ctx?.close());

describe(`catalogue rows written outside the API (${backend})`, () => {
  it('are answered as stored by lists, single reads, embeds and search', async () => {
    const artist = await createArtist(api, 'Stored');
    const album = await createAlbum(api, artist.id, 'Odd', 1999);
    const song = await createSong(api, artist.id, album.id, 'Long', '03:00');
    const longName = `Stored ${'x'.repeat(250)}`;
    await sql`update artists set name = ${longName}, name_key = ${collationKey(longName)} where id = ${artist.id}`.execute(ctx.app.db);
    await sql`update albums set year = 200 where id = ${album.id}`.execute(ctx.app.db);
    await sql`update songs set time = '123:45' where id = ${song.id}`.execute(ctx.app.db);

    const reads: [string, (body: unknown) => void][] = [
      ['/artists', (b) => expect(b).toEqual([{ id: artist.id, name: longName, image: artist.image }])],
      [`/artists/${artist.id}`, (b) => expect(b).toEqual({ name: longName, image: artist.image })],
      [`/artists/${artist.id}/albums`, (b) => expect(b).toMatchObject({ name: longName, albums: [{ id: album.id, year: 200 }] })],
      [`/artists/${artist.id}/albums/${album.id}`, (b) => expect(b).toEqual({ id: album.id, name: 'Odd', year: 200, image: album.image })],
      [`/artists/${artist.id}/albums/${album.id}/songs`, (b) => expect(b).toMatchObject({ year: 200, songs: [{ id: song.id, time: '123:45' }] })],
      [`/artists/${artist.id}/albums/${album.id}/songs/${song.id}`, (b) => expect(b).toEqual({ id: song.id, name: 'Long', time: '123:45' })],
      ['/artists?embed=albums', (b) => expect(b).toMatchObject([{ id: artist.id, albums: [{ year: 200 }] }])],
      ['/search?q=stored', (b) => expect(b).toMatchObject([{ kind: 'artist', id: artist.id, name: longName }])],
    ];
    for (const [url, check] of reads) {
      const res = await api.get(url);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      check(res.json());
    }
  });

  it.runIf(backend === 'sqlite')('a row stored with an id past 2^31 before such ids were refused is listed with its id', async () => {
    await sql`drop trigger artists_id_within_int4_insert`.execute(ctx.app.db);
    try {
      await sql`insert into artists (id, name, image, name_key) values (3000000000, 'Zz Big', 'https://img.example.com/z.jpg', ${collationKey('Zz Big')})`.execute(
        ctx.app.db,
      );
    } finally {
      await sql
        .raw(
          `create trigger artists_id_within_int4_insert before insert on artists when new.id > 2147483647 begin select raise(abort, 'id out of range: artists.id takes 1..2147483647'); end`,
        )
        .execute(ctx.app.db);
    }
    const res = await api.get('/artists?sort=id:desc&size=1');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([{ id: 3000000000, name: 'Zz Big', image: 'https://img.example.com/z.jpg' }]);
  });
});
