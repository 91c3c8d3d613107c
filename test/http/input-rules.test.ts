import { connect } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { makeConfig } from '../../src/config.js';
import { freshDatabase, type TestDatabase } from '../database.js';
import { ADMIN_TOKEN, client, createAlbum, createArtist, createSong, errorBody, type Client } from '../helpers.js';
import { captureLogs, LEVEL } from '../logs.js';

// Input rules that hold on every route: ids in paths, lengths of names, Unicode in bodies, and how a
// client hanging up is logged. The app logs into a capture here, so the log levels can be checked.

let database: TestDatabase;
let app: FastifyInstance;
let api: Client;
const logs = captureLogs();
let ids: { artist: number; album: number; song: number; token: number; user: number };

beforeAll(async () => {
  database = await freshDatabase();
  const config = makeConfig({ databaseUrl: database.url, adminToken: ADMIN_TOKEN, rateLimitPerMinute: 0, logLevel: 'info' });
  app = await buildApp(config, { logger: { level: 'info', stream: logs.stream } });
  await app.ready();
  api = client(app, ADMIN_TOKEN);
  const artist = await createArtist(api);
  const album = await createAlbum(api, artist.id);
  const song = await createSong(api, artist.id, album.id);
  const token = (await api.post('/tokens', { scopes: ['read'] })).json<{ id: number }>();
  const user = (
    await api.post('/users', { first_name: 'Ana', last_name: 'Lima', email: 'ana@example.com', age: 30, status: 'active', country: 'Brazil' })
  ).json<{ id: number }>();
  ids = { artist: artist.id, album: album.id, song: song.id, token: token.id, user: user.id };
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

describe('ids in paths', () => {
  // Each is the number 1 (or 16, 100) to Number(); none is how an id is written.
  const spellings = ['0x1', '1e0', '+1', '1.0', '01', '%201', '1%20', '0b1', '1_0'];

  it.each(spellings)('answers 400 naming artist_id for /artists/%s on reads and writes, and changes nothing', async (spelling) => {
    expect(ids.artist).toBe(1);
    // Each request carries its own id: the 400 names it, as every answer does (a client's trace id).
    const trace = (method: string) => ({ 'x-request-id': `input-rules.${method}` });
    for (const [method, res] of [
      ['get', await api.get(`/artists/${spelling}`, trace('get'))],
      ['patch', await api.patch(`/artists/${spelling}`, { name: 'Changed' }, trace('patch'))],
      ['delete', await api.delete(`/artists/${spelling}`, trace('delete'))],
    ] as const) {
      expect(res.statusCode).toBe(400);
      expect(res.headers['x-request-id'], method).toBe(`input-rules.${method}`);
      expect(errorBody(res)).toEqual({
        code: 'BAD_REQUEST',
        message: 'Request validation failed.',
        details: [{ field: 'artist_id', type: 'Must be integer.' }],
      });
    }
    expect((await api.get(`/artists/${ids.artist}`)).json()).toEqual({ name: 'Radiohead', image: 'https://img.example.com/radiohead.jpg' });
  });

  it('names each bad id of a nested path, and keeps the other rules for the rest', async () => {
    const res = await api.get(`/artists/0x1/albums/${ids.album}/songs/1e0`);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([
      { field: 'artist_id', type: 'Must be integer.' },
      { field: 'song_id', type: 'Must be integer.' },
    ]);
    const zero = await api.get(`/artists/1/albums/01/songs/0`);
    expect(errorBody(zero).details).toEqual([
      { field: 'album_id', type: 'Must be integer.' },
      { field: 'song_id', minimum: 'Must be at least 1' + '.' },
    ]);
  });

  it('still serves plain decimal ids', async () => {
    const res = await api.get(`/artists/${ids.artist}/albums/${ids.album}/songs/${ids.song}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ id: ids.song, name: 'Airbag', time: '04:44' });
  });

  it('answers 400 for DELETE /tokens/01 and leaves token 1 valid', async () => {
    const padded = `0${ids.token}`;
    const res = await api.delete(`/tokens/${padded}`);
    expect(res.statusCode).toBe(400);
    expect(errorBody(res).details).toEqual([{ field: 'token_id', type: 'Must be integer.' }]);
    const listed = (await api.get('/tokens')).json<Array<{ id: number }>>();
    expect(listed.map((t) => t.id)).toContain(ids.token);
  });

  it('answers 400 for /users/01 and PATCH /users/0x1, changing nothing', async () => {
    const get = await api.get(`/users/0${ids.user}`);
    expect(get.statusCode).toBe(400);
    expect(errorBody(get).details).toEqual([{ field: 'id', invalid: 'Must be a user id (integer) or an alias name (lower-case words joined by hyphens).' }]);
    const patch = await api.patch(`/users/0x${ids.user}`, { age: 31 });
    expect(patch.statusCode).toBe(400);
    expect(errorBody(patch).details).toEqual([{ field: 'id', type: 'Must be integer.' }]);
    expect((await api.get(`/users/${ids.user}`)).json<{ age: number }>().age).toBe(30);
  });
});

describe('the length of a name', () => {
  it('counts code points alike in a body and in a ?name= filter', async () => {
    const name = '🎸'.repeat(150); // 150 characters, 300 UTF-16 units
    const created = await api.post('/artists', { name, image: 'https://img.example.com/g.jpg' });
    expect(created.statusCode).toBe(201);
    const found = await api.get(`/artists?name=${encodeURIComponent(name)}`);
    expect(found.statusCode).toBe(200);
    expect(found.json<Array<{ name: string }>>().map((a) => a.name)).toEqual([name]);
  });

  it('refuses 201 characters in both with the same rule', async () => {
    const name = '🎸'.repeat(201);
    const created = await api.post('/artists', { name, image: 'https://img.example.com/g.jpg' });
    expect(errorBody(created).details).toEqual([{ field: 'name', maxLength: 'Must be at most 200 characters.' }]);
    const found = await api.get(`/artists?name=${encodeURIComponent(name)}`);
    expect(found.statusCode).toBe(400);
    expect(errorBody(found).details).toEqual([{ field: 'name', maxLength: 'Must be at most 200 characters.' }]);
  });
});

describe('lone UTF-16 surrogates in JSON', () => {
  const send = (raw: string) =>
    app.inject({ method: 'POST', url: '/artists', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, payload: raw });

  it('answers 400 naming the field and stores nothing', async () => {
    const before = Number((await api.get('/artists')).headers['x-total-count']);
    for (const [raw, field] of [
      ['{"name":"\\ud800lone","image":"https://img.example.com/a.jpg"}', 'name'],
      ['{"name":"tail\\udfff","image":"https://img.example.com/a.jpg"}', 'name'],
      ['{"name":"ok","image":"https://img.example.com/a.jpg","\\ud83d":1}', '\ud83d'],
    ] as const) {
      const res = await send(raw);
      expect(res.statusCode).toBe(400);
      expect(errorBody(res)).toEqual({
        code: 'BAD_REQUEST',
        message: 'Request validation failed.',
        details: [{ field, invalid: 'Must be valid Unicode text (a lone UTF-16 surrogate is not).' }],
      });
    }
    expect(Number((await api.get('/artists')).headers['x-total-count'])).toBe(before);
  });

  it('accepts a surrogate pair written as escapes, stored as the one character it is', async () => {
    const res = await send('{"name":"\\ud83c\\udfb8 Guitar","image":"https://img.example.com/a.jpg"}');
    expect(res.statusCode).toBe(201);
    expect(res.json<{ name: string }>().name).toBe('🎸 Guitar');
  });
});

describe('a DELETE with Content-Type: application/json and an empty body', () => {
  const json = { 'content-type': 'application/json' };

  it('is a DELETE without a body: 204, and the resource is gone', async () => {
    const artist = await createArtist(api, 'Deleted with a header');
    const token = (await api.post('/tokens', { scopes: ['read'] })).json<{ id: number }>();
    expect((await api.put('/aliases/users/header-only', { query: 'status=active' })).statusCode).toBe(201);
    for (const url of [`/artists/${artist.id}`, `/tokens/${token.id}`, '/aliases/users/header-only']) {
      const res = await api.send('DELETE', url, '', json);
      expect(res.statusCode, url).toBe(204);
      expect(res.body).toBe('');
      // The same DELETE again, without the header: nothing left to delete, as with it.
      expect((await api.delete(url)).statusCode, url).toBe(404);
      expect((await api.send('DELETE', url, '', json)).statusCode, url).toBe(404);
    }
  });

  it('still refuses a body that is not JSON, and an empty body on other methods', async () => {
    const artist = await createArtist(api, 'Kept');
    for (const raw of ['{', ' ', 'null,']) {
      const res = await api.send('DELETE', `/artists/${artist.id}`, raw, json);
      expect(res.statusCode, JSON.stringify(raw)).toBe(400);
      expect(errorBody(res).code).toBe('BAD_REQUEST');
    }
    expect((await api.get(`/artists/${artist.id}`)).statusCode).toBe(200);
    for (const method of ['POST', 'PATCH'] as const) {
      const res = await api.send(method, method === 'POST' ? '/artists' : `/artists/${artist.id}`, '', json);
      expect(res.statusCode).toBe(400);
      expect(errorBody(res).message).toBe('Request body is empty; send a JSON object.');
    }
  });
});

describe('a client that hangs up mid-body', () => {
  it('is logged at info as the client closing, never as an error or the database', async () => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    const logged = logs.next((line) => line.msg === 'the client closed the connection before its request was received');
    const socket = connect(port, '127.0.0.1');
    const received = logs.next((line) => line.msg === 'incoming request' && (line.req as { host?: string } | undefined)?.host === 'hangs-up.example');
    socket.write(
      `POST /artists HTTP/1.1\r\nHost: hangs-up.example\r\nAuthorization: Bearer ${ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":`,
    );
    await received;
    socket.destroy();
    const line = await logged;
    expect(line.level).toBe(LEVEL.info);
    // Whatever the failed request logs is written by now: a later request has been answered.
    expect((await client(app).get('/health')).statusCode).toBe(200);
    expect(logs.lines.filter((l) => l.level >= LEVEL.error)).toEqual([]);
    expect(logs.lines.some((l) => /database unavailable/.test(String(l.msg)))).toBe(false);
  });
});
