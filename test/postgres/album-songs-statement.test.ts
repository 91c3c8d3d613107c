import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, createSong, watchPgStatements, type Client, type TestContext } from '../helpers.js';

// PostgreSQL: GET an album's songs reads the album (under its artist), the page and the total in
// one statement (modules/songs/songs.repository.ts listSongs, issue 32), where it read the album,
// then the page, then counted a full page: a round trip each. The answers stay those of the
// separate reads: the album's fields, the page, X-Total-Count and Link, 404 naming what is missing.

let ctx: TestContext;
let reader: Client;
let artistId: number;
let otherArtistId: number;
let albumId: number;
/** The texts of the statements the app sends while set. */
let recording: string[] | undefined;
let unwatch: (() => void) | undefined;

beforeAll(async () => {
  unwatch = watchPgStatements((text, run) => (recording?.push(text), run()));
  ctx = await buildTestApp();
  const writer = client(ctx.app, ctx.tokens.write);
  reader = client(ctx.app, ctx.tokens.read);
  artistId = (await createArtist(writer, 'One statement')).id;
  otherArtistId = (await createArtist(writer, 'Another')).id;
  albumId = (await createAlbum(writer, artistId, 'Counted', 1999)).id;
  for (let i = 0; i < 5; i++) await createSong(writer, artistId, albumId, `Song ${i}`, `0${i}:1${i}`);
});
afterAll(async () => {
  unwatch?.();
  await ctx.close();
});

/** The statements reading the catalogue (not the versions alone) that one request sent, and its answer. */
async function catalogueStatements(url: string) {
  recording = [];
  try {
    const res = await reader.get(url);
    return { res, statements: recording.filter((text) => /"(songs|albums|artists)"/.test(text)) };
  } finally {
    recording = undefined;
  }
}

describe('GET an album with its songs on PostgreSQL', () => {
  it('reads the album, a full page and its total in one statement', async () => {
    const { res, statements } = await catalogueStatements(`/artists/${artistId}/albums/${albumId}/songs?sort=name:desc&page=2&size=2`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      name: 'Counted',
      year: 1999,
      image: expect.any(String),
      songs: [
        { id: expect.any(Number), name: 'Song 2', time: '02:12' },
        { id: expect.any(Number), name: 'Song 1', time: '01:11' },
      ],
    });
    expect(res.headers['x-total-count']).toBe('5');
    expect(statements, statements.join('\n')).toHaveLength(1);
  });

  it('answers an album under another artist, or a missing artist, with the 404 that names it, in one statement', async () => {
    const other = await catalogueStatements(`/artists/${otherArtistId}/albums/${albumId}/songs`);
    expect(other.res.statusCode).toBe(404);
    expect(other.res.json()).toMatchObject({ message: expect.stringMatching(/album/i) });
    const missing = await catalogueStatements(`/artists/${otherArtistId + 1000}/albums/${albumId}/songs?size=1`);
    expect(missing.res.statusCode).toBe(404);
    expect(missing.res.json()).toMatchObject({ message: expect.stringMatching(/artist/i) });
    // The list's statement, then which of the path is missing (versioned-resource.ts existing).
    expect(other.statements.filter((text) => /"songs"/.test(text))).toHaveLength(1);
  });
});
