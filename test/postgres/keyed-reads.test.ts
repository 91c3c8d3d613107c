import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, watchPgStatements, type Client, type TestContext } from '../helpers.js';

// PostgreSQL: concurrent reads of single rows by key (a user, an artist, an album under its artist)
// run as one statement per batch (db/pg-keyed.ts); each request still gets its own row, or its 404.

let ctx: TestContext;
let api: Client;
/** The texts of the statements the app sends while set. */
let recording: string[] | undefined;
let unwatch: (() => void) | undefined;

beforeAll(async () => {
  unwatch = watchPgStatements((text, run) => (recording?.push(text), run()));
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.admin);
});
afterAll(async () => {
  unwatch?.();
  await ctx.close();
});

async function statementsDuring<T>(run: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  recording = [];
  try {
    const result = await run();
    return { result, statements: recording };
  } finally {
    recording = undefined;
  }
}

describe('GET by id on PostgreSQL (keyed reads)', () => {
  it('reads concurrent single users in fewer statements than requests, each answered with its own user or 404', async () => {
    const users: { id: number; first_name: string; age: number }[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await api.post('/users', {
        first_name: `Keyed${i}`,
        last_name: 'Reader',
        email: `keyed${i}@example.com`,
        age: 20 + i,
        status: 'active',
        country: 'Chile',
      });
      expect(res.statusCode).toBe(201);
      users.push(res.json<{ id: number; first_name: string; age: number }>());
    }
    const missing = Math.max(...users.map((u) => u.id)) + 1000;
    const ids = [...users.map((u) => u.id), missing, users[0]!.id];
    const { result: answers, statements } = await statementsDuring(() => Promise.all(ids.map((id) => api.get(`/users/${id}`))));
    answers.forEach((res, i) => {
      if (ids[i] === missing) return expect(res.statusCode).toBe(404);
      expect(res.statusCode).toBe(200);
      const user = users.find((u) => u.id === ids[i])!;
      expect(res.json()).toMatchObject({ id: user.id, first_name: user.first_name, age: user.age });
    });
    const userReads = statements.filter((text) => /from "users"/.test(text));
    expect(userReads.length).toBeGreaterThan(0);
    expect(userReads.length, userReads.join('\n')).toBeLessThan(ids.length);
  });

  it('reads concurrent albums under their artists in fewer statements than requests, an album under another artist 404', async () => {
    const writer = client(ctx.app, ctx.tokens.write);
    const reader = client(ctx.app, ctx.tokens.read);
    const artists = [(await createArtist(writer, 'Keyed one')).id, (await createArtist(writer, 'Keyed two')).id];
    const albums: { artistId: number; id: number; name: string }[] = [];
    for (let i = 0; i < 8; i++) {
      const artistId = artists[i % 2]!;
      albums.push({ artistId, id: (await createAlbum(writer, artistId, `Keyed album ${i}`, 2000 + i)).id, name: `Keyed album ${i}` });
    }
    // Each album under its own artist, and one under the other artist (not its album there).
    const asks = [...albums.map((a) => ({ ...a, found: true })), { ...albums[0]!, artistId: artists[1]!, found: false }];
    // GET an album (an album's songs read it in their page's statement: test/postgres/album-songs-statement.test.ts).
    const { result: answers, statements } = await statementsDuring(() => Promise.all(asks.map((a) => reader.get(`/artists/${a.artistId}/albums/${a.id}`))));
    answers.forEach((res, i) => {
      const ask = asks[i]!;
      if (!ask.found) return expect(res.statusCode).toBe(404);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ name: ask.name });
    });
    const albumReads = statements.filter((text) => /from "albums"/.test(text));
    expect(albumReads.length).toBeGreaterThan(0);
    expect(albumReads.length, albumReads.join('\n')).toBeLessThan(asks.length);
  });
});
