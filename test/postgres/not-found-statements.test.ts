import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, errorBody, watchPgStatements, type Client, type TestContext } from '../helpers.js';

// PostgreSQL: a GET that reads no row answers 404 naming what is missing on its path (artist, album),
// and looks up only the row's parents to say so (versioned-resource.ts existing): the read itself
// said the row is not there. A single artist's 404 is its one read; an album's (or its songs'), its
// read and its artist's. Each statement is a round trip (issue 32).

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
  artistId = (await createArtist(writer, 'Present')).id;
  otherArtistId = (await createArtist(writer, 'Other')).id;
  albumId = (await createAlbum(writer, artistId, 'Here', 2001)).id;
});
afterAll(async () => {
  unwatch?.();
  await ctx.close();
});

/** The statements reading catalogue rows (not the tables' versions) that one request sent, and its answer. */
async function catalogueStatements(url: string) {
  recording = [];
  try {
    const res = await reader.get(url);
    return { res, statements: recording.filter((text) => /\bfrom "?(artists|albums|songs)\b/.test(text)) };
  } finally {
    recording = undefined;
  }
}

describe('404s on PostgreSQL', () => {
  it('a missing artist: its read alone', async () => {
    const { res, statements } = await catalogueStatements(`/artists/${otherArtistId + 1000}`);
    expect(res.statusCode).toBe(404);
    expect(errorBody(res).message).toMatch(/artist/i);
    expect(statements, statements.join('\n')).toHaveLength(1);
  });

  it('an album under another artist: its read and its artist', async () => {
    const { res, statements } = await catalogueStatements(`/artists/${otherArtistId}/albums/${albumId}`);
    expect(res.statusCode).toBe(404);
    expect(errorBody(res).message).toMatch(/album/i);
    expect(statements, statements.join('\n')).toHaveLength(2);
  });

  it('an album of a missing artist names the artist', async () => {
    const { res, statements } = await catalogueStatements(`/artists/${otherArtistId + 1000}/albums/${albumId}`);
    expect(res.statusCode).toBe(404);
    expect(errorBody(res).message).toMatch(/artist/i);
    expect(statements, statements.join('\n')).toHaveLength(2);
  });

  it("an album's songs, the album missing: the page's statement and the artist", async () => {
    const { res, statements } = await catalogueStatements(`/artists/${artistId}/albums/${albumId + 1000}/songs`);
    expect(res.statusCode).toBe(404);
    expect(errorBody(res).message).toMatch(/album/i);
    expect(statements, statements.join('\n')).toHaveLength(2);
  });

  it("an album's songs, the artist missing: names the artist", async () => {
    const { res } = await catalogueStatements(`/artists/${otherArtistId + 1000}/albums/${albumId}/songs`);
    expect(res.statusCode).toBe(404);
    expect(errorBody(res).message).toMatch(/artist/i);
  });

  it('present rows still answer 200', async () => {
    expect((await reader.get(`/artists/${artistId}`)).statusCode).toBe(200);
    expect((await reader.get(`/artists/${artistId}/albums/${albumId}`)).statusCode).toBe(200);
    expect((await reader.get(`/artists/${artistId}/albums/${albumId}/songs`)).statusCode).toBe(200);
  });
});
