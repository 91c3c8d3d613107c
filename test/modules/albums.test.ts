import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, errorBody, type Client, type TestContext } from '../helpers.js';

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
