import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createAlbum, createArtist, createSong, errorBody, type Client, type TestContext } from '../helpers.js';

let ctx: TestContext;
let api: Client;

beforeAll(async () => {
  ctx = await buildTestApp();
  api = client(ctx.app, ctx.tokens.write);
});
afterAll(() => ctx.close());

describe('POST /artists', () => {
  it('creates an artist: 201, Location, {id, name, image}', async () => {
    const res = await api.post('/artists', { name: 'Radiohead', image: 'https://img.example.com/r.jpg' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json();
    expect(body).toEqual({ id: expect.any(Number), name: 'Radiohead', image: 'https://img.example.com/r.jpg' });
    expect(res.headers.location).toBe(`/artists/${body.id}`);
  });

  it('stores the name trimmed', async () => {
    const res = await api.post('/artists', { name: '  Björk  ', image: 'http://img.example.com/b.png' });
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe('Björk');
  });

  it('rejects a body without image with the interface document detail', async () => {
    const res = await api.post('/artists', { name: 'Portishead' });
    expect(res.statusCode).toBe(400);
    expect(errorBody(res)).toEqual({
      code: 'BAD_REQUEST',
      message: 'Request validation failed.',
      details: [{ field: 'image', required: 'Missing data for required field.' }],
    });
  });

  it('lists every failing field, not only the first', async () => {
    const res = await api.post('/artists', {});
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual(
      expect.arrayContaining([
        { field: 'name', required: 'Missing data for required field.' },
        { field: 'image', required: 'Missing data for required field.' },
      ]),
    );
    expect(errorBody(res).details).toHaveLength(2);
  });

  it.each([
    ['blank name', { name: '   ', image: 'https://a.example/x' }, { field: 'name', pattern: 'Must not be blank.' }],
    ['empty name', { name: '', image: 'https://a.example/x' }, { field: 'name', minLength: 'Must be at least 1 character.' }],
    ['name over 200', { name: 'x'.repeat(201), image: 'https://a.example/x' }, { field: 'name', maxLength: 'Must be at most 200 characters.' }],
    ['name not a string', { name: 42, image: 'https://a.example/x' }, { field: 'name', type: 'Must be string.' }],
    ['image not a URL', { name: 'A', image: 'not a url' }, { field: 'image', pattern: 'Must be an absolute http(s) URL.' }],
    ['image not http(s)', { name: 'A', image: 'ftp://a.example/x' }, { field: 'image', pattern: 'Must be an absolute http(s) URL.' }],
    ['image javascript:', { name: 'A', image: 'javascript:alert(1)' }, { field: 'image', pattern: 'Must be an absolute http(s) URL.' }],
    ['image over 2048', { name: 'A', image: `https://a.example/${'x'.repeat(2040)}` }, { field: 'image', maxLength: 'Must be at most 2048 characters.' }],
    ['unknown field', { name: 'A', image: 'https://a.example/x', genre: 'rock' }, { field: 'genre', unknown: 'Unknown field.' }],
  ])('rejects %s with a detail naming the field and rule', async (_label, body, detail) => {
    const res = await api.post('/artists', body);
    expect(res.statusCode).toBe(400);
    const err = errorBody(res);
    expect(err.code).toBe('BAD_REQUEST');
    expect(err.details).toContainEqual(detail);
  });

  it('accepts a name of exactly 200 characters', async () => {
    const res = await api.post('/artists', { name: 'x'.repeat(200), image: 'https://a.example/x' });
    expect(res.statusCode).toBe(201);
  });

  it('counts the length of the name as sent (maxLength 200, as the document says) and stores it trimmed', async () => {
    const name = `n${'x'.repeat(193)}n`;
    const res = await api.post('/artists', { name: `   ${name}\t `, image: 'https://a.example/x' });
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe(name);
    const over = await api.post('/artists', { name: ` ${'x'.repeat(200)}`, image: 'https://a.example/x' });
    expect(over.statusCode).toBe(400);
    expect(errorBody(over).details).toEqual([{ field: 'name', maxLength: 'Must be at most 200 characters.' }]);
    const blank = await api.post('/artists', { name: ' \t ', image: 'https://a.example/x' });
    expect(errorBody(blank).details).toEqual([{ field: 'name', pattern: 'Must not be blank.' }]);
  });

  it('rejects a body that is not an object (or an array of them: bulk create)', async () => {
    const res = await api.post('/artists', '"just text"', { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([{ field: 'body', type: 'Must be object.' }]);
    const items = await api.post('/artists', [1, 2]);
    expect(items.statusCode).toBe(400);
    expect(errorBody(items).details).toEqual([
      { field: '0', type: 'Must be object.' },
      { field: '1', type: 'Must be object.' },
    ]);
  });

  it('rejects malformed JSON in the standard body', async () => {
    const res = await api.post('/artists', '{"name": "x",', { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(400);
    expect(errorBody(res)).toEqual({ code: 'BAD_REQUEST', message: 'Malformed JSON in request body.' });
  });

  it('rejects an empty JSON body', async () => {
    const res = await api.post('/artists', '', { 'content-type': 'application/json' });
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).code).toBe('BAD_REQUEST');
  });

  it.each(['application/x-www-form-urlencoded', 'application/xml', 'text/plain', 'text/plain; charset=utf-8'])(
    'rejects the content type %s with 415 in the standard body, creating nothing',
    async (type) => {
      const before = (await api.get('/artists?size=1')).headers['x-total-count'];
      const res = await api.post('/artists', '{"name":"Text","image":"https://a.example/x"}', { 'content-type': type });
      expect(res.statusCode).toBe(415);
      expect(errorBody(res)).toEqual({ code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Unsupported content type; send application/json.' });
      expect((await api.get('/artists?size=1')).headers['x-total-count']).toBe(before);
    },
  );

  it('rejects a body over 1 MiB with 413', async () => {
    const res = await api.post('/artists', JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10), image: 'https://a.example/x' }), {
      'content-type': 'application/json',
    });
    expect(res.statusCode).toBe(413);
    expect(errorBody(res)).toEqual({ code: 'PAYLOAD_TOO_LARGE', message: 'Request body is too large.' });
  });

  it('rejects prototype-pollution keys without touching anything', async () => {
    const res = await api.post('/artists', '{"name":"A","image":"https://a.example/x","__proto__":{"admin":true}}', {
      'content-type': 'application/json',
    });
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).code).toBe('BAD_REQUEST');
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});

describe('GET /artists/{artist_id}', () => {
  it('returns {name, image} without the id', async () => {
    const artist = await createArtist(api, 'Massive Attack', 'https://img.example.com/ma.jpg');
    const res = await client(ctx.app, ctx.tokens.read).get(`/artists/${artist.id}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ name: 'Massive Attack', image: 'https://img.example.com/ma.jpg' });
  });

  it('answers 404 naming the kind for an unknown id', async () => {
    const res = await api.get('/artists/999999');
    expect(res.statusCode).toBe(404);
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Artist not found.' });
  });

  it.each(['abc', '1.5', '-1', '0', '99999999999999999999'])('answers 400 with a detail for the id %s', async (id) => {
    const res = await api.get(`/artists/${id}`);
    expect(res.statusCode).toBe(400);
    const err = errorBody(res);
    expect(err.details?.[0]?.field).toBe('artist_id');
  });

  it('rejects unknown query parameters', async () => {
    const artist = await createArtist(api);
    const res = await api.get(`/artists/${artist.id}?verbose=1`);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([{ field: 'verbose', unknown: 'Unknown query parameter.' }]);
  });
});

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
