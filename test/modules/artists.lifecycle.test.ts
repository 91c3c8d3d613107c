import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, createSong, errorBody, type Client, type TestContext } from '../helpers.js';

let ctx: TestContext;
let api: Client;

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.write);
});
afterAll(() => ctx.close());

async function countRows(table: 'artists' | 'albums' | 'songs') {
  const row = await ctx.app.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('GET /artists/{artist_id} (conditional)', () => {
  it('sends a strong ETag and answers 304 without a body to a matching If-None-Match', async () => {
    const artist = await createArtist(api);
    const first = await api.get(`/artists/${artist.id}`);
    expect(first.statusCode).toBe(200);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await api.get(`/artists/${artist.id}`, { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(etag);
    const weak = await api.get(`/artists/${artist.id}`, { 'if-none-match': `"other", W/${etag}` });
    expect(weak.statusCode).toBe(304);
  });

  it('answers 200 with a new ETag once the artist changed', async () => {
    const artist = await createArtist(api);
    const etag = (await api.get(`/artists/${artist.id}`)).headers.etag as string;
    await api.patch(`/artists/${artist.id}`, { name: 'Renamed' });
    const res = await api.get(`/artists/${artist.id}`, { 'if-none-match': etag });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).not.toBe(etag);
    expect(res.json()).toEqual({ name: 'Renamed', image: artist.image });
  });
});

describe('PATCH /artists/{artist_id}', () => {
  it('updates only the fields sent and answers the whole artist with its new ETag', async () => {
    const artist = await createArtist(api, 'Blur', 'https://img.example.com/blur.jpg');
    const res = await api.patch(`/artists/${artist.id}`, { name: '  Gorillaz  ' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: artist.id, name: 'Gorillaz', image: 'https://img.example.com/blur.jpg' });
    const get = await api.get(`/artists/${artist.id}`);
    expect(get.json()).toEqual({ name: 'Gorillaz', image: 'https://img.example.com/blur.jpg' });
    expect(res.headers.etag).toBe(get.headers.etag);
  });

  it('counts the length of the name as sent (maxLength 200) and stores it trimmed', async () => {
    const artist = await createArtist(api);
    const res = await api.patch(`/artists/${artist.id}`, { name: ` ${'p'.repeat(198)} ` });
    expect(res.statusCode).toBe(200);
    expect(res.json().name).toBe('p'.repeat(198));
    const over = await api.patch(`/artists/${artist.id}`, { name: ` ${'p'.repeat(200)}` });
    expect(over.statusCode).toBe(400);
  });

  it('applies If-Match with the current ETag and refuses a stale one with 412, changing nothing', async () => {
    const artist = await createArtist(api, 'Pulp');
    const etag = (await api.get(`/artists/${artist.id}`)).headers.etag as string;
    const ok = await api.patch(`/artists/${artist.id}`, { name: 'Pulp!' }, { 'if-match': etag });
    expect(ok.statusCode).toBe(200);
    const stale = await api.patch(`/artists/${artist.id}`, { name: 'Lost update' }, { 'if-match': etag });
    expect(stale.statusCode).toBe(412);
    expect(errorBody(stale).code).toBe('PRECONDITION_FAILED');
    expect((await api.get(`/artists/${artist.id}`)).json().name).toBe('Pulp!');
  });

  it('accepts If-Match: * and a list holding the current ETag; a weak tag never matches', async () => {
    const artist = await createArtist(api);
    expect((await api.patch(`/artists/${artist.id}`, { name: 'Star' }, { 'if-match': '*' })).statusCode).toBe(200);
    const etag = (await api.get(`/artists/${artist.id}`)).headers.etag as string;
    expect((await api.patch(`/artists/${artist.id}`, { name: 'W' }, { 'if-match': `W/${etag}` })).statusCode).toBe(412);
    expect((await api.patch(`/artists/${artist.id}`, { name: 'L' }, { 'if-match': `"nope", ${etag}` })).statusCode).toBe(200);
  });

  it('answers 404 naming the kind for an unknown artist, even with If-Match', async () => {
    const variants: Record<string, string>[] = [{}, { 'if-match': '*' }, { 'if-match': '"artist-999999-v1"' }];
    for (const headers of variants) {
      const res = await api.patch('/artists/999999', { name: 'X' }, headers);
      expect(res.statusCode).toBe(404);
      expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Artist not found.' });
    }
  });

  it.each([
    ['an empty body', {}, { field: 'body', required: 'At least one field must be sent.' }],
    ['a blank name', { name: '  ' }, { field: 'name', pattern: 'Must not be blank.' }],
    ['a name over 200', { name: 'x'.repeat(201) }, { field: 'name', maxLength: 'Must be at most 200 characters.' }],
    ['a bad image', { image: 'ftp://x.example/a' }, { field: 'image', pattern: 'Must be an absolute http(s) URL.' }],
    ['a null name', { name: null }, { field: 'name', type: 'Must be string.' }],
    ['an unknown field', { genre: 'rock' }, { field: 'genre', unknown: 'Unknown field.' }],
    ['the id', { id: 5 }, { field: 'id', unknown: 'Unknown field.' }],
  ])('rejects %s with 400 and leaves the artist as it was', async (_label, body, detail) => {
    const artist = await createArtist(api, 'Unchanged');
    const res = await api.patch(`/artists/${artist.id}`, body);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toContainEqual(detail);
    expect((await api.get(`/artists/${artist.id}`)).json().name).toBe('Unchanged');
  });

  it('needs the write scope', async () => {
    const artist = await createArtist(api);
    const res = await client(ctx.app, ctx.tokens.read).patch(`/artists/${artist.id}`, { name: 'X' });
    expect(res.statusCode).toBe(403);
    expect((await client(ctx.app).patch(`/artists/${artist.id}`, { name: 'X' })).statusCode).toBe(401);
  });
});

describe('DELETE /artists/{artist_id}', () => {
  it('answers 204 and takes the albums and their songs with it, leaving no orphans', async () => {
    const keep = await createArtist(api, 'Keeper');
    const keptAlbum = await createAlbum(api, keep.id);
    await createSong(api, keep.id, keptAlbum.id);
    const artist = await createArtist(api, 'Goner');
    const albums = [await createAlbum(api, artist.id, 'One'), await createAlbum(api, artist.id, 'Two')];
    for (const album of albums) {
      await createSong(api, artist.id, album.id, 'a');
      await createSong(api, artist.id, album.id, 'b');
    }
    const before = { albums: await countRows('albums'), songs: await countRows('songs') };

    const res = await api.delete(`/artists/${artist.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');

    expect((await api.get(`/artists/${artist.id}`)).statusCode).toBe(404);
    expect(errorBody(await api.get(`/artists/${artist.id}/albums/${albums[0]!.id}`)).message).toBe('Artist not found.');
    expect(await countRows('albums')).toBe(before.albums - 2);
    expect(await countRows('songs')).toBe(before.songs - 4);
    const orphans = await ctx.app.db
      .selectFrom('songs')
      .leftJoin('albums', 'albums.id', 'songs.album_id')
      .select('songs.id')
      .where('albums.id', 'is', null)
      .execute();
    expect(orphans).toEqual([]);
    expect((await api.get(`/artists/${keep.id}/albums/${keptAlbum.id}/songs`)).json().songs).toHaveLength(1);
  });

  it('answers 404 for an artist that does not exist (or no longer does)', async () => {
    const artist = await createArtist(api);
    expect((await api.delete(`/artists/${artist.id}`)).statusCode).toBe(204);
    const res = await api.delete(`/artists/${artist.id}`);
    expect(res.statusCode).toBe(404);
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Artist not found.' });
  });

  it('refuses a stale If-Match with 412 and deletes nothing; the current one deletes', async () => {
    const artist = await createArtist(api);
    const album = await createAlbum(api, artist.id);
    const etag = (await api.get(`/artists/${artist.id}`)).headers.etag as string;
    await api.patch(`/artists/${artist.id}`, { name: 'Changed meanwhile' });
    const stale = await api.delete(`/artists/${artist.id}`, { 'if-match': etag });
    expect(stale.statusCode).toBe(412);
    expect((await api.get(`/artists/${artist.id}/albums/${album.id}`)).statusCode).toBe(200);
    const current = (await api.get(`/artists/${artist.id}`)).headers.etag as string;
    expect((await api.delete(`/artists/${artist.id}`, { 'if-match': current })).statusCode).toBe(204);
  });

  it('answers 400 for a bad id and 403 for a read token', async () => {
    expect((await api.delete('/artists/abc')).statusCode).toBe(400);
    const artist = await createArtist(api);
    expect((await client(ctx.app, ctx.tokens.read).delete(`/artists/${artist.id}`)).statusCode).toBe(403);
  });
});
