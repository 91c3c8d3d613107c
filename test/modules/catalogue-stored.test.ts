import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildTestApp, client, createAlbum, createArtist, createSong, type Client, type TestContext } from '../helpers.js';
import { answerProblems } from '../openapi-check.js';
import { backend } from '../database.js';
import { collationKey } from '../../src/db/collation.js';

// Catalogue rows written outside the API (psql, sqlite3) with what the API never writes (a year
// outside 1000..9999, a name past 200 characters, a time that is not mm:ss) are answered as stored by
// every read (docs/stored-data.md), not a 500 for failing the document's write rules. The OpenAPI
// document states what the API writes, so those values are outside it: they are checked against what
// is stored, and every answer against the document with them put back as the API wrote them (the rest,
// the rows the API wrote included, matches the document as it is). On SQLite, a row stored with an id
// past 2^31 before such ids were refused (migration 20261126T0400) is listed with its id.

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
    const other = await createArtist(api, 'Stored Too');
    const back: Record<string, unknown> = { [longName]: 'Stored', 200: 1999, '123:45': '03:00' };
    const asWritten = (body: unknown): unknown => {
      if (Array.isArray(body)) return body.map(asWritten);
      if (body && typeof body === 'object') return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, asWritten(v)]));
      return typeof body === 'string' || typeof body === 'number' ? (back[body] ?? body) : body;
    };
    const stored = client(ctx.app, ctx.tokens.admin, { asWritten });

    const reads: [string, (body: unknown) => void][] = [
      ['/artists', (b) => expect(b).toEqual([{ id: artist.id, name: longName, image: artist.image }, other])],
      [`/artists/${artist.id}`, (b) => expect(b).toEqual({ name: longName, image: artist.image })],
      [`/artists/${artist.id}/albums`, (b) => expect(b).toMatchObject({ name: longName, albums: [{ id: album.id, year: 200 }] })],
      [`/artists/${artist.id}/albums/${album.id}`, (b) => expect(b).toEqual({ id: album.id, name: 'Odd', year: 200, image: album.image })],
      [`/artists/${artist.id}/albums/${album.id}/songs`, (b) => expect(b).toMatchObject({ year: 200, songs: [{ id: song.id, time: '123:45' }] })],
      [`/artists/${artist.id}/albums/${album.id}/songs/${song.id}`, (b) => expect(b).toEqual({ id: song.id, name: 'Long', time: '123:45' })],
      [
        '/artists?embed=albums',
        (b) =>
          expect(b).toMatchObject([
            { id: artist.id, albums: [{ year: 200 }] },
            { ...other, albums: [] },
          ]),
      ],
      ['/search?q=stored', (b) => expect(b).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'artist', id: artist.id, name: longName })]))],
    ];
    for (const [url, check] of reads) {
      const res = await stored.get(url);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      check(res.json());
    }
    // The document is unchanged: it states what the API writes, which the stored values are not.
    const one = await stored.get(`/artists/${artist.id}/albums/${album.id}`);
    expect(answerProblems(ctx.app, 'GET', `/artists/${artist.id}/albums/${album.id}`, one).join()).toMatch(/body does not match/);
  });

  it.runIf(backend === 'sqlite')('a row stored with an id past 2^31 before such ids were refused is listed with its id', async () => {
    const mine = await createArtist(api, 'Zz Mine');
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
    // The API wrote no part of that row: the answer is checked against the document without it.
    const withoutIt = (body: unknown) => (body as { id: number }[]).filter((row) => row.id !== 3000000000);
    const res = await client(ctx.app, ctx.tokens.admin, { asWritten: withoutIt }).get('/artists?sort=id:desc&size=2');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual([{ id: 3000000000, name: 'Zz Big', image: 'https://img.example.com/z.jpg' }, mine]);
  });
});
