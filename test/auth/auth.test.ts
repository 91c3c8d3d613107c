import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, buildTestApp, client, createAlbum, createArtist, errorBody, type TestContext } from '../helpers.js';

let ctx: TestContext;
let artistId: number;
let albumId: number;

beforeAll(async () => {
  ctx = await buildTestApp();
  const api = client(ctx.app, ctx.tokens.write);
  artistId = (await createArtist(api)).id;
  albumId = (await createAlbum(api, artistId)).id;
});
afterAll(() => ctx.close());

type Scope = 'read' | 'write' | 'admin' | 'metrics';
interface RouteCase {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** The URL; routes that consume what they address (DELETE) make a fresh resource per call. */
  url: () => string | Promise<string>;
  /** A value, or a function that makes one per call. */
  body?: unknown;
  needs: Scope;
  ok: number;
}

const routes: RouteCase[] = [
  { method: 'POST', url: () => '/artists', body: { name: 'A', image: 'https://a.example/a' }, needs: 'write', ok: 201 },
  { method: 'GET', url: () => `/artists/${artistId}`, needs: 'read', ok: 200 },
  { method: 'POST', url: () => `/artists/${artistId}/albums`, body: { name: 'B', year: 2000, image: 'https://a.example/b' }, needs: 'write', ok: 201 },
  { method: 'GET', url: () => `/artists/${artistId}/albums`, needs: 'read', ok: 200 },
  { method: 'POST', url: () => `/artists/${artistId}/albums/${albumId}/songs`, body: { name: 'C', time: '03:00' }, needs: 'write', ok: 201 },
  { method: 'GET', url: () => `/artists/${artistId}/albums/${albumId}/songs`, needs: 'read', ok: 200 },
  { method: 'POST', url: () => '/tokens', body: { scopes: ['read'] }, needs: 'admin', ok: 201 },
  { method: 'GET', url: () => '/tokens', needs: 'admin', ok: 200 },
  { method: 'GET', url: () => '/artists', needs: 'read', ok: 200 },
  { method: 'GET', url: () => `/artists/${artistId}/albums/${albumId}`, needs: 'read', ok: 200 },
  { method: 'PATCH', url: () => `/artists/${artistId}`, body: { name: 'Renamed' }, needs: 'write', ok: 200 },
  { method: 'PATCH', url: () => `/artists/${artistId}/albums/${albumId}`, body: { year: 1998 }, needs: 'write', ok: 200 },
  { method: 'DELETE', url: async () => `/artists/${(await createArtist(client(ctx.app, ADMIN_TOKEN), 'Doomed')).id}`, needs: 'write', ok: 204 },
  { method: 'GET', url: () => '/users', needs: 'admin', ok: 200 },
  { method: 'POST', url: () => '/users', body: () => newUser(), needs: 'admin', ok: 201 },
  { method: 'GET', url: () => '/users/young-brazilians', needs: 'admin', ok: 200 },
  { method: 'GET', url: () => '/aliases', needs: 'read', ok: 200 },
  { method: 'PUT', url: () => '/aliases/users/adults', body: { query: 'older_than=17' }, needs: 'admin', ok: 201 },
  { method: 'GET', url: () => '/search?q=radio', needs: 'read', ok: 200 },
  { method: 'GET', url: () => '/metrics', needs: 'metrics', ok: 200 },
];

let userSeq = 0;
function newUser() {
  userSeq += 1;
  return { first_name: 'Ana', last_name: 'Silva', email: `ana${userSeq}@example.com`, age: 30, status: 'active', country: 'Brazil' };
}

const RANK: Record<Scope, number> = { read: 1, write: 2, admin: 3, metrics: 0 };
/** admin implies write implies read; metrics stands apart, and admin holds it too. */
const holds = (scope: Scope, needed: Scope) => (needed === 'metrics' ? scope === 'admin' || scope === 'metrics' : RANK[scope] >= RANK[needed]);

describe('the auth matrix', () => {
  const bodyOf = (route: RouteCase) => (typeof route.body === 'function' ? (route.body as () => unknown)() : route.body);
  for (const route of routes) {
    const label = `${route.method} ${route.url.toString().replace(/^(async )?\(\) => /, '')}`;

    it(`${label}: no token is 401 with WWW-Authenticate: Bearer`, async () => {
      const res = await client(ctx.app).send(route.method, await route.url(), bodyOf(route));
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(errorBody(res).code).toBe('UNAUTHORIZED');
    });

    it(`${label}: an unknown token is 401`, async () => {
      const res = await client(ctx.app, 'mc_not-a-real-token').send(route.method, await route.url(), bodyOf(route));
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toContain('error="invalid_token"');
      expect(errorBody(res)).toEqual({ code: 'UNAUTHORIZED', message: 'The token is unknown or revoked.' });
    });

    for (const scope of ['read', 'write', 'admin'] as const) {
      const allowed = holds(scope, route.needs);
      it(`${label}: a ${scope} token is ${allowed ? `allowed (${route.ok})` : '403 FORBIDDEN'}`, async () => {
        const res = await client(ctx.app, ctx.tokens[scope]).send(route.method, await route.url(), bodyOf(route));
        if (allowed) {
          expect(res.statusCode).toBe(route.ok);
        } else {
          expect(res.statusCode).toBe(403);
          expect(errorBody(res)).toEqual({ code: 'FORBIDDEN', message: `This token lacks the "${route.needs}" scope needed here.` });
        }
      });
    }
  }
});

describe('Authorization header parsing', () => {
  it.each(['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer a b', 'token abc'])('rejects %j as malformed with 401', async (header) => {
    const res = await ctx.app.inject({ method: 'GET', url: `/artists/${artistId}`, headers: { authorization: header } });
    expect(res.statusCode).toBe(401);
    expect(errorBody(res).code).toBe('UNAUTHORIZED');
  });

  it('accepts the scheme case-insensitively', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: `/artists/${artistId}`, headers: { authorization: `bearer ${ctx.tokens.read}` } });
    expect(res.statusCode).toBe(200);
  });

  it('accepts CATALOGUE_ADMIN_TOKEN as an admin token', async () => {
    const res = await client(ctx.app, ADMIN_TOKEN).get('/tokens');
    expect(res.statusCode).toBe(200);
  });

  it('checks the token before validating the request', async () => {
    const res = await client(ctx.app).get('/artists/not-an-id');
    expect(res.statusCode).toBe(401);
  });
});

describe('public routes', () => {
  it.each(['/health', '/ready', '/openapi.json'])('%s needs no token', async (url) => {
    const res = await client(ctx.app).get(url);
    expect(res.statusCode).toBe(200);
  });
});
