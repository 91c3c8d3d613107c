import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, createSong, errorBody, type Client, type TestContext } from '../helpers.js';

let ctx: TestContext;
let api: Client;
let ids: { radiohead: number; okc: number; airbag: number; bjork: number; homogenic: number };

beforeAll(async () => {
  ctx = await buildTestApp();
  const writer = client(ctx.app, ctx.tokens.write);
  const radiohead = await createArtist(writer, 'Radiohead');
  const okc = await createAlbum(writer, radiohead.id, 'OK Computer', 1997);
  const airbag = await createSong(writer, radiohead.id, okc.id, 'Airbag', '04:44');
  await createSong(writer, radiohead.id, okc.id, 'Paranoid Android', '06:23');
  await createSong(writer, radiohead.id, okc.id, 'Karma Police', '04:21');
  const bjork = await createArtist(writer, 'Björk');
  const homogenic = await createAlbum(writer, bjork.id, 'Homogenic', 1997);
  await createSong(writer, bjork.id, homogenic.id, 'Jóga', '05:05');
  await createSong(writer, bjork.id, homogenic.id, 'Computer Love', '03:30');
  ids = { radiohead: radiohead.id, okc: okc.id, airbag: airbag.id, bjork: bjork.id, homogenic: homogenic.id };
  api = client(ctx.app, ctx.tokens.read);
});
afterAll(() => ctx.close());

describe('GET /search', () => {
  it('finds artists, albums and songs by name, each with its kind and path', async () => {
    const res = await api.get('/search?q=computer');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-total-count']).toBe('2');
    const hits = res.json<{ kind: string; name: string; path: string }[]>();
    expect(hits).toEqual(
      expect.arrayContaining([
        { kind: 'album', id: ids.okc, name: 'OK Computer', path: `/artists/${ids.radiohead}/albums/${ids.okc}` },
        {
          kind: 'song',
          id: expect.any(Number),
          name: 'Computer Love',
          path: expect.stringMatching(new RegExp(`^/artists/${ids.bjork}/albums/${ids.homogenic}/songs/\\d+$`)),
        },
      ]),
    );
    expect((await api.get('/search?q=radiohead')).json()).toEqual([
      { kind: 'artist', id: ids.radiohead, name: 'Radiohead', path: `/artists/${ids.radiohead}` },
    ]);
  });

  it('matches word prefixes, every word, ignoring case', async () => {
    expect((await api.get('/search?q=AIRB')).json()).toEqual([
      { kind: 'song', id: ids.airbag, name: 'Airbag', path: `/artists/${ids.radiohead}/albums/${ids.okc}/songs/${ids.airbag}` },
    ]);
    expect((await api.get('/search?q=ok%20comp')).json()).toEqual([expect.objectContaining({ name: 'OK Computer' })]);
    expect((await api.get('/search?q=karma%20android')).json()).toEqual([]);
  });

  // A known difference, documented in the README: FTS5 folds accents; PostgreSQL's 'simple' text
  // search configuration does not (unaccent is an extension the service does not require).
  it.runIf(process.env.TEST_BACKEND !== 'postgres')('ignores accents on SQLite', async () => {
    expect((await api.get('/search?q=bjork')).json()).toEqual([expect.objectContaining({ kind: 'artist', name: 'Björk' })]);
    expect((await api.get('/search?q=joga')).json()).toEqual([expect.objectContaining({ kind: 'song', name: 'Jóga' })]);
  });

  it('ranks the closer match first', async () => {
    const writer = client(ctx.app, ctx.tokens.write);
    await createArtist(writer, 'Police');
    const names = (await api.get('/search?q=police')).json<{ name: string }[]>().map((h) => h.name);
    expect(names).toEqual(['Police', 'Karma Police']);
  });

  it('paginates with page and size (default 20), with X-Total-Count and Link', async () => {
    const writer = client(ctx.app, ctx.tokens.write);
    for (let i = 1; i <= 25; i++) await createArtist(writer, `Pagination Band ${i}`);
    const first = await api.get('/search?q=pagination&size=2');
    expect(first.headers['x-total-count']).toBe('25');
    expect(first.json()).toHaveLength(2);
    expect(first.headers.link).toBe(
      '</search?q=pagination&page=1&size=2>; rel="first", </search?q=pagination&page=2&size=2>; rel="next", </search?q=pagination&page=13&size=2>; rel="last"',
    );
    expect((await api.get('/search?q=pagination')).json()).toHaveLength(20);
    const all = (await api.get('/search?q=pagination&size=100')).json<{ name: string }[]>();
    expect(all.map((h) => h.name)).toEqual(Array.from({ length: 25 }, (_, i) => `Pagination Band ${i + 1}`)); // equal rank: by id
    expect((await api.get('/search?q=pagination&page=2&size=2')).json()).toEqual(all.slice(2, 4));
    const past = await api.get('/search?q=pagination&page=99&size=2');
    expect(past.statusCode).toBe(200);
    expect(past.json()).toEqual([]);
    expect(past.headers['x-total-count']).toBe('25');
  });

  it('reflects renames and deletions through the index triggers', async () => {
    const writer = client(ctx.app, ctx.tokens.write);
    const artist = await createArtist(writer, 'Zyzzyva Quartet');
    expect((await api.get('/search?q=zyzzyva')).json()).toHaveLength(1);
    // Rename and delete straight in the database: the triggers, not the routes, keep the index in step.
    await ctx.app.db.updateTable('artists').set({ name: 'Xylo Quartet' }).where('id', '=', artist.id).execute();
    expect((await api.get('/search?q=zyzzyva')).json()).toEqual([]);
    expect((await api.get('/search?q=xylo')).json()).toEqual([expect.objectContaining({ id: artist.id, name: 'Xylo Quartet' })]);
    await ctx.app.db.deleteFrom('artists').where('id', '=', ids.bjork).execute(); // cascades to albums and songs
    expect((await api.get('/search?q=homogenic')).json()).toEqual([]);
    expect((await api.get('/search?q=joga')).json()).toEqual([]);
  });

  it.each([
    ['missing q', '/search', { field: 'q', required: 'Missing data for required field.' }],
    ['q over 200 characters', `/search?q=${'a'.repeat(201)}`, { field: 'q', maxLength: 'Must be at most 200 characters.' }],
    ['q without a letter or digit', '/search?q=%22*%20(%20-%20%5E', { field: 'q', pattern: 'Must contain at least one letter or digit.' }],
    ['size over 100', '/search?q=a&size=101', { field: 'size', maximum: 'Must be at most 100.' }],
    ['page 0', '/search?q=a&page=0', { field: 'page', minimum: 'Must be at least 1.' }],
    ['unknown parameter', '/search?q=a&kind=song', { field: 'kind', unknown: 'Unknown query parameter.' }],
  ])('rejects %s with 400 and a detail', async (_name, url, detail) => {
    const res = await api.get(url);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([detail]);
  });

  it('rejects an empty q with both rules it fails: too short, and no letter or digit', async () => {
    const res = await api.get('/search?q=');
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([
      { field: 'q', minLength: 'Must be at least 1 character.' },
      { field: 'q', pattern: 'Must contain at least one letter or digit.' },
    ]);
  });

  it('treats FTS syntax in q as plain words', async () => {
    const res = await api.get('/search?q=NEAR(ok%20computer)%20OR%20*');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-total-count']).toBe('0'); // "near" matches no name: every word must match
  });

  it('needs a token', async () => {
    const res = await client(ctx.app).get('/search?q=a');
    expect(res.statusCode).toBe(401);
  });
});
