import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { ADMIN_TOKEN, buildTestApp, client, createAlbum, createArtist, createSong, type Client, type TestContext } from '../helpers.js';
import { backend } from '../database.js';

// The response cache answers repeated GETs before Fastify (http/response-cache.ts). It only ever
// answers through a real socket (inject bypasses the server), so these tests talk HTTP.

async function listening(ctx: TestContext): Promise<string> {
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
}

const PER_RESPONSE = new Set(['x-request-id', 'date']);
function lasting(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => !PER_RESPONSE.has(name)));
}

const sqlite = backend === 'sqlite';

describe('response cache', () => {
  let ctx: TestContext;
  let api: Client;
  let base: string;
  const get = (path: string, token: string, headers: Record<string, string> = {}) =>
    fetch(base + path, { headers: { authorization: `Bearer ${token}`, ...headers } });
  const hits = () => ctx.app.responseCache.stats().hits;

  beforeAll(async () => {
    ctx = await buildTestApp();
    api = client(ctx.app, ctx.tokens.write);
    base = await listening(ctx);
  });
  afterAll(() => ctx.close());

  it('answers a repeated GET with the same status, headers and body, and a request id of its own', async () => {
    const artist = await createArtist(api, 'Cached Artist');
    const album = await createAlbum(api, artist.id);
    await createSong(api, artist.id, album.id);
    for (const path of [`/artists/${artist.id}`, `/artists/${artist.id}/albums/${album.id}/songs`, '/users?sort=id&size=5']) {
      const token = path.startsWith('/users') ? ctx.tokens.admin : ctx.tokens.read;
      const first = await get(path, token);
      const before = hits();
      const second = await get(path, token, { 'x-request-id': 'req-cached-1' });
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(hits()).toBe(sqlite ? before + 1 : 0);
      expect(await second.text()).toBe(await first.text());
      expect(lasting(second.headers)).toEqual(lasting(first.headers));
      expect(second.headers.get('x-request-id')).toBe('req-cached-1');
      expect(first.headers.get('x-request-id')).not.toBe(second.headers.get('x-request-id'));
    }
  });

  it('a write through the API retires it at once', async () => {
    const artist = await createArtist(api, 'Before');
    const path = `/artists/${artist.id}`;
    await get(path, ctx.tokens.read);
    await get(path, ctx.tokens.read);
    const patched = await api.patch(path, { name: 'After' });
    expect(patched.statusCode).toBe(200);
    const res = await get(path, ctx.tokens.read);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name: 'After', image: artist.image });
    expect(res.headers.get('etag')).toBe(patched.headers.etag);
  });

  it.runIf(sqlite)('a commit by another process (another connection to the file) retires it at once', async () => {
    const artist = await createArtist(api, 'Outside Before');
    const path = `/artists/${artist.id}`;
    await get(path, ctx.tokens.read);
    const before = hits();
    expect(((await (await get(path, ctx.tokens.read)).json()) as { name: string }).name).toBe('Outside Before');
    expect(hits()).toBe(before + 1);

    const other = new Database(ctx.config.databaseUrl.replace(/^sqlite:/, ''));
    try {
      other.prepare('update artists set name = ?, version = version + 1 where id = ?').run('Outside After', artist.id);
    } finally {
      other.close();
    }
    const res = await get(path, ctx.tokens.read);
    expect(await res.json()).toEqual({ name: 'Outside After', image: artist.image });
    expect(res.headers.get('etag')).toBe(`"artist-${artist.id}-v2"`);
  });

  it('a revoked token is refused at once, a token without the scope is never answered from another token\'s entry', async () => {
    const made = await client(ctx.app, ADMIN_TOKEN).post('/tokens', { scopes: ['read'], name: 'soon revoked' });
    const { id, token } = made.json() as { id: number; token: string };
    const artist = await createArtist(api, 'Revocation');
    const path = `/artists/${artist.id}`;
    expect((await get(path, token)).status).toBe(200);
    expect((await get(path, token)).status).toBe(200);
    expect((await client(ctx.app, ADMIN_TOKEN).delete(`/tokens/${id}`)).statusCode).toBe(204);
    const refused = await get(path, token);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe('UNAUTHORIZED');

    await get('/users?size=1', ctx.tokens.admin);
    await get('/users?size=1', ctx.tokens.admin);
    const forbidden = await get('/users?size=1', ctx.tokens.read);
    expect(forbidden.status).toBe(403);
    expect(((await forbidden.json()) as { code: string }).code).toBe('FORBIDDEN');
    expect((await get('/users?size=1', 'mc_not_a_token')).status).toBe(401);
  });

  it('conditional requests still get 304, and metrics count answers from the cache', async () => {
    const artist = await createArtist(api, 'Conditional');
    const path = `/artists/${artist.id}`;
    const first = await get(path, ctx.tokens.read);
    await get(path, ctx.tokens.read);
    const notModified = await get(path, ctx.tokens.read, { 'if-none-match': first.headers.get('etag')! });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');

    const metric = async () => {
      const text = await (await get('/metrics', ADMIN_TOKEN)).text();
      const line = text.split('\n').find((l) => l.startsWith('http_requests_total{method="GET",route="/artists/:artist_id",status_code="200"}'));
      return Number(line?.split(' ')[1] ?? 0);
    };
    const counted = await metric();
    await get(path, ctx.tokens.read);
    await get(path, ctx.tokens.read);
    expect(await metric()).toBe(counted + 2);
    // /metrics itself is not a cacheable route: two reads in a row differ.
    expect(await (await get('/metrics', ADMIN_TOKEN)).text()).not.toBe(await (await get('/metrics', ADMIN_TOKEN)).text());
  });
});

describe('response cache limits', () => {
  it('stays within RESPONSE_CACHE_MB, oldest entries out first', async () => {
    const ctx = await buildTestApp({ responseCacheBytes: 64 * 1024 });
    try {
      const base = await listening(ctx);
      const api = client(ctx.app, ctx.tokens.write);
      await createArtist(api, 'x'.repeat(200));
      for (let size = 1; size <= 60; size++) {
        const res = await fetch(`${base}/artists?size=${size}`, { headers: { authorization: `Bearer ${ctx.tokens.read}` } });
        expect(res.status).toBe(200);
      }
      const stats = ctx.app.responseCache.stats();
      expect(stats.bytes).toBeLessThanOrEqual(64 * 1024);
      if (sqlite) {
        expect(stats.stores).toBeGreaterThanOrEqual(60);
        expect(stats.entries).toBeLessThan(60);
      }
    } finally {
      await ctx.close();
    }
  });

  it('is off while rate limiting is on: every answer carries its own RateLimit-Remaining', async () => {
    const ctx = await buildTestApp({ rateLimitPerMinute: 1000 });
    try {
      const base = await listening(ctx);
      const artist = await createArtist(client(ctx.app, ctx.tokens.write));
      const remaining: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await fetch(`${base}/artists/${artist.id}`, { headers: { authorization: `Bearer ${ctx.tokens.read}` } });
        expect(res.status).toBe(200);
        remaining.push(res.headers.get('ratelimit-remaining')!);
      }
      expect(new Set(remaining).size).toBe(3);
      expect(ctx.app.responseCache.stats()).toMatchObject({ enabled: false, hits: 0, entries: 0 });
    } finally {
      await ctx.close();
    }
  });
});
