import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, errorBody, type TestContext } from '../helpers.js';
import { routePattern } from '../../src/http/method-not-allowed.plugin.js';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await buildTestApp();
});
afterAll(() => ctx.close());

describe('a method a known path does not take', () => {
  it.each([
    ['PUT', '/artists/1', 'DELETE, GET, HEAD, PATCH'],
    ['DELETE', '/artists', 'GET, HEAD, POST'],
    ['PATCH', '/artists/1/albums', 'GET, HEAD, POST'],
    ['POST', '/artists/1/albums/2', 'DELETE, GET, HEAD, PATCH'],
    ['PUT', '/artists/1/albums/2/songs/3', 'DELETE, GET, HEAD, PATCH'],
    ['OPTIONS', '/artists/1/albums/2/songs', 'GET, HEAD, POST'],
    ['POST', '/health', 'GET, HEAD'],
  ])('%s %s is 405 with Allow: %s', async (method, url, allow) => {
    const res = await client(ctx.app, ctx.tokens.admin).send(method as 'PUT', url, method === 'POST' || method === 'PUT' ? {} : undefined);
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe(allow);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(errorBody(res)).toEqual({ code: 'METHOD_NOT_ALLOWED', message: `Method ${method} is not allowed here; allowed: ${allow}.` });
  });

  it('leaves unknown paths as 404 "Route not found."', async () => {
    for (const url of ['/albums', '/artists/1/songs', '/artists/1/albums/2/songs/3/extra', '/artists/1/']) {
      const res = await client(ctx.app).send('PUT', url, {});
      expect(res.statusCode).toBe(404);
      expect(res.headers.allow).toBeUndefined();
      expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Route not found.' });
    }
  });
});

describe('trailing slashes and empty path segments', () => {
  it('are other paths, none of which is served: 404 "Route not found." with or without a token, before authentication', async () => {
    for (const [method, url] of [
      ['GET', '/artists/'],
      ['POST', '/artists/'],
      ['GET', '/users/'],
      ['GET', '/artists//albums'],
      ['GET', '/health/'],
      ['GET', '/openapi.json/'],
    ] as const) {
      for (const token of [undefined, ctx.tokens.admin]) {
        const res = await client(ctx.app, token).send(method, url, method === 'POST' ? { name: 'X', image: 'https://a.example/x' } : undefined);
        expect(res.statusCode).toBe(404);
        expect(res.headers['www-authenticate']).toBeUndefined();
        expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Route not found.' });
      }
    }
    const listed = await client(ctx.app, ctx.tokens.admin).get('/artists');
    expect(listed.statusCode).toBe(200);
    expect(listed.json()).toEqual([]); // the POSTs above stored nothing
  });
});

describe('a route that finds nothing for its own method', () => {
  it('answers 404 "Route not found." for an unknown file under the docs static prefix, not 405', async () => {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await client(ctx.app).send(method, '/docs/static/nope.js');
      expect(res.statusCode).toBe(404);
      expect(res.headers.allow).toBeUndefined();
      if (method === 'GET') expect(errorBody(res)).toEqual({ code: 'NOT_FOUND', message: 'Route not found.' });
    }
  });

  it('still serves the files that are there, and still answers 405 to a method the prefix does not take', async () => {
    const file = await client(ctx.app).get('/docs/static/swagger-ui.css');
    expect(file.statusCode).toBe(200);
    const post = await client(ctx.app).send('POST', '/docs/static/nope.js', {});
    expect(post.statusCode).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });
});

describe('routePattern', () => {
  it('matches one segment per parameter, and not a trailing slash (the router does not either)', () => {
    const pattern = routePattern('/artists/:artist_id/albums');
    expect(pattern.test('/artists/12/albums')).toBe(true);
    expect(pattern.test('/artists/12/albums/')).toBe(false);
    expect(pattern.test('/artists/12/13/albums')).toBe(false);
    expect(pattern.test('/artists/12/albumsX')).toBe(false);
    expect(routePattern('/docs/*').test('/docs/static/x.js')).toBe(true);
  });
});
