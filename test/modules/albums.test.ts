import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, createSong, errorBody, type Client, type TestContext } from '../helpers.js';

let ctx: TestContext;
let api: Client;

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.write);
});
afterAll(() => ctx.close());

describe('POST /artists/{artist_id}/albums', () => {
  it('creates an album: 201, Location, {id, name, year, image}', async () => {
    const artist = await createArtist(api);
    const res = await api.post(`/artists/${artist.id}/albums`, { name: 'Kid A', year: 2000, image: 'https://img.example.com/kida.jpg' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ id: expect.any(Number), name: 'Kid A', year: 2000, image: 'https://img.example.com/kida.jpg' });
    expect(res.headers.location).toBe(`/artists/${artist.id}/albums/${body.id}`);
  });

  it('counts the length of the name as sent (maxLength 200) and stores it trimmed', async () => {
    const artist = await createArtist(api);
    const res = await api.post(`/artists/${artist.id}/albums`, { name: ` ${'a'.repeat(198)} `, year: 2000, image: 'https://a.example/x' });
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe('a'.repeat(198));
    const over = await api.post(`/artists/${artist.id}/albums`, { name: `${'a'.repeat(200)} `, year: 2000, image: 'https://a.example/x' });
    expect(over.statusCode).toBe(400);
    expect(errorBody(over).details).toEqual([{ field: 'name', maxLength: 'Must be at most 200 characters.' }]);
  });

  it('answers 404 "Artist not found." for an unknown artist', async () => {
    const res = await api.post('/artists/424242/albums', { name: 'X', year: 2000, image: 'https://a.example/x' });
    expect(res.statusCode).toBe(404);
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Artist not found.' });
  });

  it('lists every missing field as required', async () => {
    const artist = await createArtist(api);
    const res = await api.post(`/artists/${artist.id}/albums`, {});
    expect(res.statusCode).toBe(400);
    const details = errorBody(res).details;
    expect(details).toHaveLength(3);
    for (const field of ['name', 'year', 'image']) {
      expect(details).toContainEqual({ field, required: 'Missing data for required field.' });
    }
  });

  it.each([
    ['year as a string', { year: '1997' }, { field: 'year', type: 'Must be integer.' }],
    ['year not whole', { year: 1997.5 }, { field: 'year', type: 'Must be integer.' }],
    ['year below 1000', { year: 999 }, { field: 'year', minimum: 'Must be at least 1000.' }],
    ['year above 9999', { year: 10000 }, { field: 'year', maximum: 'Must be at most 9999.' }],
    ['blank name', { name: '\t ' }, { field: 'name', pattern: 'Must not be blank.' }],
    ['bad image', { image: 'img.jpg' }, { field: 'image', pattern: 'Must be an absolute http(s) URL.' }],
    ['unknown field', { tracks: 12 }, { field: 'tracks', unknown: 'Unknown field.' }],
  ])('rejects %s', async (_label, change, detail) => {
    const artist = await createArtist(api);
    const res = await api.post(`/artists/${artist.id}/albums`, { name: 'A', year: 2000, image: 'https://a.example/x', ...change });
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toContainEqual(detail);
  });

  it('asks for a token before validating the body', async () => {
    const res = await client(ctx.app).post('/artists/1/albums', {});
    expect(res.statusCode).toBe(401);
  });
});

describe('GET /artists/{artist_id}/albums', () => {
  it("returns the artist's name and image with its albums", async () => {
    const artist = await createArtist(api, 'Portishead', 'https://img.example.com/p.jpg');
    const dummy = await createAlbum(api, artist.id, 'Dummy', 1994, 'https://img.example.com/d.jpg');
    const third = await createAlbum(api, artist.id, 'Third', 2008, 'https://img.example.com/t.jpg');
    const other = await createArtist(api, 'Other');
    await createAlbum(api, other.id, 'Not theirs', 2001);
    const res = await client(ctx.app, ctx.tokens.read).get(`/artists/${artist.id}/albums`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      name: 'Portishead',
      image: 'https://img.example.com/p.jpg',
      albums: [
        { id: dummy.id, name: 'Dummy', year: 1994, image: 'https://img.example.com/d.jpg' },
        { id: third.id, name: 'Third', year: 2008, image: 'https://img.example.com/t.jpg' },
      ],
    });
  });

  it('returns an empty albums array for an artist without albums', async () => {
    const artist = await createArtist(api, 'New');
    const res = await api.get(`/artists/${artist.id}/albums`);
    expect(res.statusCode).toBe(200);
    expect(res.json().albums).toEqual([]);
  });

  it('answers 404 "Artist not found." for an unknown artist', async () => {
    const res = await api.get('/artists/777777/albums');
    expect(res.statusCode).toBe(404);
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Artist not found.' });
  });

  it('answers 400 for a non-integer artist id', async () => {
    const res = await api.get('/artists/x/albums');
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([{ field: 'artist_id', type: 'Must be integer.' }]);
  });
});

describe('GET /artists/{artist_id}/albums/{album_id}', () => {
  it('returns the Album {id, name, year, image} with an ETag; If-None-Match gives 304', async () => {
    const artist = await createArtist(api);
    const album = await createAlbum(api, artist.id, 'Kid A', 2000, 'https://img.example.com/kida.jpg');
    const res = await client(ctx.app, ctx.tokens.read).get(`/artists/${artist.id}/albums/${album.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: album.id, name: 'Kid A', year: 2000, image: 'https://img.example.com/kida.jpg' });
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
    const cached = await api.get(`/artists/${artist.id}/albums/${album.id}`, { 'if-none-match': res.headers.etag as string });
    expect(cached.statusCode).toBe(304);
    expect(cached.body).toBe('');
  });

  it('answers 404 "Album not found." for an album of another artist or an unknown one', async () => {
    const owner = await createArtist(api);
    const other = await createArtist(api);
    const album = await createAlbum(api, owner.id);
    for (const url of [`/artists/${other.id}/albums/${album.id}`, `/artists/${owner.id}/albums/999999`]) {
      const res = await api.get(url);
      expect(res.statusCode).toBe(404);
      expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Album not found.' });
    }
  });

  it('answers 404 "Artist not found." when the artist does not exist', async () => {
    const res = await api.get('/artists/999999/albums/1');
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Artist not found.' });
  });

  it('answers 400 naming a bad album id', async () => {
    const res = await api.get('/artists/1/albums/x');
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details?.[0]?.field).toBe('album_id');
  });
});

describe('PATCH /artists/{artist_id}/albums/{album_id}', () => {
  it('updates the fields sent and answers the Album with the ETag a GET now gives', async () => {
    const artist = await createArtist(api);
    const album = await createAlbum(api, artist.id, 'Amnesiac', 2001);
    const res = await api.patch(`/artists/${artist.id}/albums/${album.id}`, { year: 2002, name: ' Amnesiac (Deluxe) ' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: album.id, name: 'Amnesiac (Deluxe)', year: 2002, image: album.image });
    const get = await api.get(`/artists/${artist.id}/albums/${album.id}`);
    expect(get.json()).toEqual(res.json());
    expect(get.headers.etag).toBe(res.headers.etag);
  });

  it('refuses a stale If-Match with 412 and keeps the album', async () => {
    const artist = await createArtist(api);
    const album = await createAlbum(api, artist.id, 'Pablo Honey', 1993);
    const etag = (await api.get(`/artists/${artist.id}/albums/${album.id}`)).headers.etag as string;
    expect((await api.patch(`/artists/${artist.id}/albums/${album.id}`, { year: 1994 }, { 'if-match': etag })).statusCode).toBe(200);
    const stale = await api.patch(`/artists/${artist.id}/albums/${album.id}`, { year: 1995 }, { 'if-match': etag });
    expect(stale.statusCode).toBe(412);
    expect(errorBody(stale).code).toBe('PRECONDITION_FAILED');
    expect((await api.get(`/artists/${artist.id}/albums/${album.id}`)).json().year).toBe(1994);
  });

  it('does not accept the ETag of another album', async () => {
    const artist = await createArtist(api);
    const a = await createAlbum(api, artist.id, 'A');
    const b = await createAlbum(api, artist.id, 'B');
    const etagOfA = (await api.get(`/artists/${artist.id}/albums/${a.id}`)).headers.etag as string;
    expect((await api.patch(`/artists/${artist.id}/albums/${b.id}`, { name: 'X' }, { 'if-match': etagOfA })).statusCode).toBe(412);
  });

  it('answers 404 under the wrong artist and changes nothing', async () => {
    const owner = await createArtist(api);
    const other = await createArtist(api);
    const album = await createAlbum(api, owner.id, 'Mine');
    const res = await api.patch(`/artists/${other.id}/albums/${album.id}`, { name: 'Stolen' });
    expect(res.statusCode).toBe(404);
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Album not found.' });
    expect((await api.get(`/artists/${owner.id}/albums/${album.id}`)).json().name).toBe('Mine');
    expect(errorBody(await api.patch(`/artists/999999/albums/${album.id}`, { name: 'X' })).message).toBe('Artist not found.');
  });

  it.each([
    ['an empty body', {}, { field: 'body', required: 'At least one field must be sent.' }],
    ['a year as text', { year: '2001' }, { field: 'year', type: 'Must be integer.' }],
    ['a year below 1000', { year: 999 }, { field: 'year', minimum: 'Must be at least 1000.' }],
    ['a year above 9999', { year: 10000 }, { field: 'year', maximum: 'Must be at most 9999.' }],
    ['a bad image', { image: 'nope' }, { field: 'image', pattern: 'Must be an absolute http(s) URL.' }],
    ['an unknown field', { artist_id: 2 }, { field: 'artist_id', unknown: 'Unknown field.' }],
  ])('rejects %s with 400', async (_label, body, detail) => {
    const artist = await createArtist(api);
    const album = await createAlbum(api, artist.id, 'Same', 1997);
    const res = await api.patch(`/artists/${artist.id}/albums/${album.id}`, body);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toContainEqual(detail);
    expect((await api.get(`/artists/${artist.id}/albums/${album.id}`)).json()).toEqual(album);
  });
});

describe('DELETE /artists/{artist_id}/albums/{album_id}', () => {
  it('answers 204 and removes the album with its songs only', async () => {
    const artist = await createArtist(api);
    const gone = await createAlbum(api, artist.id, 'Gone');
    const kept = await createAlbum(api, artist.id, 'Kept');
    await createSong(api, artist.id, gone.id, 'x');
    await createSong(api, artist.id, gone.id, 'y');
    await createSong(api, artist.id, kept.id, 'z');

    const res = await api.delete(`/artists/${artist.id}/albums/${gone.id}`);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(errorBody(await api.get(`/artists/${artist.id}/albums/${gone.id}/songs`)).message).toBe('Album not found.');
    expect((await api.get(`/artists/${artist.id}/albums`)).json().albums.map((a: { id: number }) => a.id)).toEqual([kept.id]);
    const left = await ctx.app.db.selectFrom('songs').select('album_id').where('album_id', 'in', [gone.id, kept.id]).execute();
    expect(left).toEqual([{ album_id: kept.id }]);
  });

  it('answers 404 under the wrong artist and deletes nothing', async () => {
    const owner = await createArtist(api);
    const other = await createArtist(api);
    const album = await createAlbum(api, owner.id);
    const res = await api.delete(`/artists/${other.id}/albums/${album.id}`);
    expect(res.statusCode).toBe(404);
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Album not found.' });
    expect((await api.get(`/artists/${owner.id}/albums/${album.id}`)).statusCode).toBe(200);
  });

  it('honours If-Match: 412 when stale, 204 when current', async () => {
    const artist = await createArtist(api);
    const album = await createAlbum(api, artist.id);
    const url = `/artists/${artist.id}/albums/${album.id}`;
    const etag = (await api.get(url)).headers.etag as string;
    await api.patch(url, { name: 'Edited' });
    expect((await api.delete(url, { 'if-match': etag })).statusCode).toBe(412);
    expect((await api.delete(url, { 'if-match': (await api.get(url)).headers.etag as string })).statusCode).toBe(204);
  });

  it('needs the write scope', async () => {
    const artist = await createArtist(api);
    const album = await createAlbum(api, artist.id);
    expect((await client(ctx.app, ctx.tokens.read).delete(`/artists/${artist.id}/albums/${album.id}`)).statusCode).toBe(403);
  });
});
