import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, errorBody, type TestContext } from '../helpers.js';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await buildTestApp();
});
afterAll(() => ctx.close());

describe('GET /health', () => {
  it('answers 200 {status: "ok"}', async () => {
    const res = await client(ctx.app).get('/health');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok' });
  });
});

describe('GET /ready', () => {
  it('answers 200 when the database answers', async () => {
    const res = await client(ctx.app).get('/ready');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ready', database: 'ok' });
  });
});

describe('GET /openapi.json', () => {
  it('is an OpenAPI 3.1 document describing every route with the shared ErrorBody', async () => {
    const res = await client(ctx.app).get('/openapi.json');
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.bearerAuth).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(doc.components.schemas.ErrorBody.required).toEqual(['code', 'message']);
    const paths = Object.keys(doc.paths);
    for (const p of [
      '/artists',
      '/artists/{artist_id}',
      '/artists/{artist_id}/albums',
      '/artists/{artist_id}/albums/{album_id}/songs',
      '/tokens',
      '/tokens/{token_id}',
      '/health',
      '/ready',
    ]) {
      expect(paths).toContain(p);
    }
    const createArtist = doc.paths['/artists'].post;
    // One artist, or an array of up to 100 of them (bulk create).
    const [one, many] = createArtist.requestBody.content['application/json'].schema.anyOf;
    expect(one.required).toEqual(['name', 'image']);
    expect([many.type, many.maxItems, many.items.required]).toEqual(['array', 100, ['name', 'image']]);
    expect(Object.keys(createArtist.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '403', '500']));
    expect(doc.paths['/health'].get.security).toEqual([]);
  });
});

describe('GET /docs', () => {
  it('serves the interactive docs page from bundled files', async () => {
    const res = await client(ctx.app).get('/docs/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('swagger-ui');
    const bundle = await client(ctx.app).get('/docs/static/swagger-ui-bundle.js');
    expect(bundle.statusCode).toBe(200);
  });
});

describe('X-Request-Id', () => {
  it('is generated on every response', async () => {
    const res = await client(ctx.app).get('/health');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('echoes a safe id sent by the client, on errors too', async () => {
    const res = await client(ctx.app).get('/nowhere', { 'x-request-id': 'trace-abc.123' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['x-request-id']).toBe('trace-abc.123');
  });

  it('replaces an unsafe id instead of echoing it', async () => {
    const res = await client(ctx.app).get('/health', { 'x-request-id': '<script>' });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('unknown routes', () => {
  it('answer 404 "Route not found." in the standard body', async () => {
    const res = await client(ctx.app, ctx.tokens.admin).get('/albums');
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Route not found.' });
  });
});

describe('request bodies that are not JSON', () => {
  it('get 415 UNSUPPORTED_MEDIA_TYPE on every route that takes a body, text/plain included, and change nothing', async () => {
    const admin = client(ctx.app, ctx.tokens.admin);
    const artist = (await admin.post('/artists', { name: 'Plain', image: 'https://img.example.com/p.jpg' })).json<{ id: number }>();
    const album = (await admin.post(`/artists/${artist.id}/albums`, { name: 'A', year: 2000, image: 'https://img.example.com/a.jpg' })).json<{
      id: number;
    }>();
    const song = (await admin.post(`/artists/${artist.id}/albums/${album.id}/songs`, { name: 'S', time: '01:00' })).json<{ id: number }>();
    const user = (
      await admin.post('/users', { first_name: 'A', last_name: 'B', email: 'plain@example.com', age: 30, status: 'active', country: 'Chile' })
    ).json<{ id: number }>();
    const routes: [method: 'POST' | 'PATCH' | 'PUT', url: string, body: string][] = [
      ['POST', '/artists', '{"name":"T","image":"https://img.example.com/t.jpg"}'],
      ['PATCH', `/artists/${artist.id}`, '{"name":"T"}'],
      ['POST', `/artists/${artist.id}/albums`, '{"name":"T","year":2000,"image":"https://img.example.com/t.jpg"}'],
      ['PATCH', `/artists/${artist.id}/albums/${album.id}`, '{"name":"T"}'],
      ['POST', `/artists/${artist.id}/albums/${album.id}/songs`, '{"name":"T","time":"01:00"}'],
      ['PATCH', `/artists/${artist.id}/albums/${album.id}/songs/${song.id}`, '{"name":"T"}'],
      ['POST', '/users', '{"first_name":"T","last_name":"T","email":"t@example.com","age":1,"status":"active","country":"T"}'],
      ['PATCH', `/users/${user.id}`, '{"first_name":"T"}'],
      ['PUT', '/aliases/users/plain-text', '{"query":"status=active"}'],
      ['POST', '/tokens', '{"scopes":["read"]}'],
    ];
    for (const [method, url, body] of routes) {
      for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/xml']) {
        const res = await admin.send(method, url, body, { 'content-type': type });
        expect({ method, url, type, status: res.statusCode }).toEqual({ method, url, type, status: 415 });
        expect(errorBody(res)).toEqual({ code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Unsupported content type; send application/json.' });
      }
    }
    expect((await admin.get(`/artists/${artist.id}`)).json().name).toBe('Plain');
    expect((await admin.get(`/users/${user.id}`)).json().first_name).toBe('A');
    expect((await admin.get('/aliases')).json()).not.toContainEqual(expect.objectContaining({ name: 'plain-text' }));
  });
});

describe('unexpected failures', () => {
  it('answer 500 with code and message only, never a stack, SQL or path', async () => {
    const local = await buildTestApp({}, (app) => {
      app.get('/__explode', async () => {
        throw new Error('SQLITE_ERROR: no such column: secret in "select secret from /var/lib/db.sqlite"');
      });
    });
    try {
      const res = await local.app.inject({ method: 'GET', url: '/__explode' });
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({ code: 'INTERNAL_SERVER_ERROR', message: 'An unexpected error occurred.' });
      expect(res.body).not.toMatch(/SQLITE|select|\/var\/|at .*\.ts/);
    } finally {
      await local.close();
    }
  });
});
