import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createArtist, errorBody, type Client, type TestContext } from '../helpers.js';

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
