import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import pg from 'pg';
import { sql } from 'kysely';
import {
  ADMIN_TOKEN,
  beforeInstant,
  buildTestApp,
  client,
  createAlbum,
  createArtist,
  createSong,
  type Client,
  type LogEntry,
  type TestContext,
} from '../helpers.js';
import { backend } from '../database.js';
import { storedName } from '../../src/db/collation.js';

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

/** Waits until the clock is past `instant` (ms since the epoch): a deadline, not a guess at how long things take. */
async function past(instant: number): Promise<void> {
  while (Date.now() <= instant) await new Promise((resolve) => setTimeout(resolve, instant - Date.now() + 1));
}

describe('response cache', () => {
  let ctx: TestContext;
  let api: Client;
  let base: string;
  let sent = 0;
  const get = (path: string, token: string, headers: Record<string, string> = {}) => {
    sent++;
    return fetch(base + path, { headers: { authorization: `Bearer ${token}`, ...headers } });
  };
  const hits = () => ctx.app.responseCache.stats().hits;
  // A repeated GET answered from the cache: an answer is stored the second time its URL is asked
  // (the first goes straight to Fastify), and the very next request is answered from it, on both
  // backends (entries are stamped with the versions of this app's own tables, which other test files
  // never write).
  async function cachedGet(path: string, token: string, headers: Record<string, string> = {}) {
    const before = hits();
    const res = await get(path, token, headers);
    if (hits() !== before + 1) throw new Error(`no answer from the cache for ${path}`);
    return res;
  }

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
      expect((await get(path, token)).status).toBe(200); // asked again: stored
      const second = await cachedGet(path, token, { 'x-request-id': 'req-cached-1' });
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(await second.text()).toBe(await first.text());
      expect(lasting(second.headers)).toEqual(lasting(first.headers));
      expect(second.headers.get('x-request-id')).toBe('req-cached-1');
      expect(first.headers.get('x-request-id')).not.toBe(second.headers.get('x-request-id'));
    }
  });

  it('stores an answer the second time its URL is asked (with the same token): the first ask goes straight to Fastify', async () => {
    const artist = await createArtist(api, 'Asked Twice');
    const path = `/artists/${artist.id}`;
    const stats = () => ctx.app.responseCache.stats();
    const start = stats();
    expect((await get(path, ctx.tokens.read)).status).toBe(200);
    expect(stats()).toMatchObject({ stores: start.stores, hits: start.hits });
    // The same URL with another token is another answer, asked for the first time.
    expect((await get(path, ctx.tokens.write)).status).toBe(200);
    expect(stats()).toMatchObject({ stores: start.stores, hits: start.hits });
    expect((await get(path, ctx.tokens.read)).status).toBe(200);
    expect(stats()).toMatchObject({ stores: start.stores + 1, hits: start.hits });
    expect((await get(path, ctx.tokens.read)).status).toBe(200);
    expect(stats()).toMatchObject({ stores: start.stores + 1, hits: start.hits + 1 });
  });

  it('identical requests arriving together (one batch) each get the whole answer, cached or not', async () => {
    const artist = await createArtist(api, 'Herd');
    const path = `/artists/${artist.id}/albums`;
    const answers = await Promise.all(Array.from({ length: 12 }, () => get(path, ctx.tokens.read)));
    const bodies = await Promise.all(answers.map((r) => r.text()));
    expect(answers.map((r) => r.status)).toEqual(Array(12).fill(200));
    expect(new Set(bodies)).toEqual(new Set([JSON.stringify({ name: 'Herd', image: artist.image, albums: [] })]));
    expect(new Set(answers.map((r) => r.headers.get('x-request-id'))).size).toBe(12);
    const missing = await Promise.all(Array.from({ length: 6 }, () => get('/artists/987654321', ctx.tokens.read)));
    expect(missing.map((r) => r.status)).toEqual(Array(6).fill(404));
    for (const r of missing) expect(((await r.json()) as { code: string }).code).toBe('NOT_FOUND');
  });

  it('a write through the API retires it at once', async () => {
    const artist = await createArtist(api, 'Before');
    const path = `/artists/${artist.id}`;
    await get(path, ctx.tokens.read);
    await get(path, ctx.tokens.read);
    await cachedGet(path, ctx.tokens.read);
    const patched = await api.patch(path, { name: 'After' });
    expect(patched.statusCode).toBe(200);
    const res = await get(path, ctx.tokens.read);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ name: 'After', image: artist.image });
    expect(res.headers.get('etag')).toBe(patched.headers.etag);
  });

  it('a write to a table the answer does not read leaves it; a write to one it reads retires it', async () => {
    const artist = await createArtist(api, 'Elsewhere');
    const album = await createAlbum(api, artist.id);
    const admin = client(ctx.app, ctx.tokens.admin);
    const user = (
      await admin.post('/users', { first_name: 'Per', last_name: 'Table', email: 'per.table@example.com', age: 40, status: 'active', country: 'Norway' })
    ).json<{ id: number }>();
    const path = '/users?lives_in=norway&sort=age:desc&size=5';
    const first = await get(path, ctx.tokens.admin);
    expect(first.headers.get('x-total-count')).toBe('1');
    await get(path, ctx.tokens.admin);
    await cachedGet(path, ctx.tokens.admin);

    // A song, an artist and an album written: the users' answer is still served from the cache.
    expect((await createSong(api, artist.id, album.id, 'Unrelated')).id).toBeGreaterThan(0);
    expect((await api.patch(`/artists/${artist.id}`, { name: 'Elsewhere Too' })).statusCode).toBe(200);
    const still = await cachedGet(path, ctx.tokens.admin);
    expect(await still.json()).toEqual(await first.json());

    // The user moved: the next answer is read anew, with the new total.
    expect((await admin.patch(`/users/${user.id}`, { country: 'Sweden' })).statusCode).toBe(200);
    const before = hits();
    const after = await get(path, ctx.tokens.admin);
    expect(hits()).toBe(before);
    expect(after.headers.get('x-total-count')).toBe('0');
    expect(await after.json()).toEqual([]);
  });

  it('a commit by another process (another connection to the database) retires it at once', async () => {
    const artist = await createArtist(api, 'Outside Before');
    const path = `/artists/${artist.id}`;
    await get(path, ctx.tokens.read);
    await get(path, ctx.tokens.read);
    expect(((await (await cachedGet(path, ctx.tokens.read)).json()) as { name: string }).name).toBe('Outside Before');

    // A writer outside the service stores the name's key too (src/db/collation.ts).
    const update = 'update artists set name = $1, name_key = $2, version = version + 1 where id = $3';
    const after = storedName('Outside After');
    if (sqlite) {
      const other = new Database(ctx.config.databaseUrl.replace(/^sqlite:/, ''));
      try {
        other.prepare(update.replace(/\$\d/g, '?')).run(after.name, after.name_key, artist.id);
      } finally {
        other.close();
      }
    } else {
      const other = new pg.Client({ connectionString: ctx.config.databaseUrl });
      await other.connect();
      try {
        await other.query(update, [after.name, after.name_key, artist.id]);
      } finally {
        await other.end();
      }
    }
    const res = await get(path, ctx.tokens.read);
    expect(await res.json()).toEqual({ name: 'Outside After', image: artist.image });
    expect(res.headers.get('etag')).toBe(`"artist-${artist.id}-v2"`);
  });

  it("a revoked token is refused at once, a token without the scope is never answered from another token's entry", async () => {
    const made = await client(ctx.app, ADMIN_TOKEN).post('/tokens', { scopes: ['read'], name: 'soon revoked' });
    const { id, token } = made.json<{ id: number; token: string }>();
    const artist = await createArtist(api, 'Revocation');
    const path = `/artists/${artist.id}`;
    expect((await get(path, token)).status).toBe(200);
    expect((await get(path, token)).status).toBe(200);
    expect((await cachedGet(path, token)).status).toBe(200);
    expect((await client(ctx.app, ADMIN_TOKEN).delete(`/tokens/${id}`)).statusCode).toBe(204);
    const refused = await get(path, token);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe('UNAUTHORIZED');

    await get('/users?size=1', ctx.tokens.admin);
    await get('/users?size=1', ctx.tokens.admin);
    await cachedGet('/users?size=1', ctx.tokens.admin);
    const forbidden = await get('/users?size=1', ctx.tokens.read);
    expect(forbidden.status).toBe(403);
    expect(((await forbidden.json()) as { code: string }).code).toBe('FORBIDDEN');
    expect((await get('/users?size=1', 'mc_not_a_token')).status).toBe(401);
  });

  it('an answer depends on every table it read: embedded albums and songs retire it when they change', async () => {
    const artist = await createArtist(api, 'Embedding Parent');
    const album = await createAlbum(api, artist.id, 'First Album');
    const song = await createSong(api, artist.id, album.id, 'First Song');
    const artists = `/artists?name=${encodeURIComponent('Embedding Parent')}&embed=albums`;
    const albums = `/artists/${artist.id}/albums?embed=songs`;
    const read = async (path: string) => (await get(path, ctx.tokens.read)).json();
    for (const path of [artists, albums]) {
      await get(path, ctx.tokens.read);
      await get(path, ctx.tokens.read);
      await cachedGet(path, ctx.tokens.read);
    }
    // Children written, parents untouched: the stored answers are not served.
    const second = await createAlbum(api, artist.id, 'Second Album');
    expect(((await read(artists)) as { albums: { name: string }[] }[])[0]!.albums.map((a) => a.name)).toEqual(['First Album', 'Second Album']);
    expect((await api.patch(`/artists/${artist.id}/albums/${album.id}/songs/${song.id}`, { name: 'Renamed Song' })).statusCode).toBe(200);
    const [first] = ((await read(albums)) as { albums: { id: number; songs: { name: string }[] }[] }).albums;
    expect(first!.songs.map((x) => x.name)).toEqual(['Renamed Song']);
    expect((await api.delete(`/artists/${artist.id}/albums/${second.id}`)).statusCode).toBe(204);
    expect(((await read(artists)) as { albums: { name: string }[] }[])[0]!.albums.map((a) => a.name)).toEqual(['First Album']);
  });

  it('a token past its expires_at is refused from that instant, on URLs it had read from the cache too', async () => {
    const artist = await createArtist(api, 'Expiry');
    const paths = [`/artists/${artist.id}`, `/artists/${artist.id}/albums`];
    // Its answers stored and served before it expires: with an expiry further ahead again if the
    // machine took longer than that (under load it took 1.2 s of 3).
    const { instant: expiry, value: token } = await beforeInstant(3000, async (instant) => {
      const made = await client(ctx.app, ADMIN_TOKEN).post('/tokens', { scopes: ['read'], name: 'expiring', expires_at: new Date(instant).toISOString() });
      expect(made.statusCode).toBe(201);
      const { token } = made.json<{ token: string }>();
      for (const path of paths) {
        expect((await get(path, token)).status).toBe(200);
        expect((await get(path, token)).status).toBe(200);
        expect((await cachedGet(path, token)).status).toBe(200);
      }
      return token;
    });
    await past(expiry);
    for (const path of paths) {
      const before = hits();
      const refused = await get(path, token);
      expect(refused.status).toBe(401);
      expect(refused.headers.get('www-authenticate')).toContain('invalid_token');
      expect(await refused.json()).toMatchObject({ code: 'UNAUTHORIZED', message: 'The token has expired.' });
      expect(hits()).toBe(before);
    }
    // Another token's stored answer for the same URL is still served.
    await get(paths[0]!, ctx.tokens.read);
    await get(paths[0]!, ctx.tokens.read);
    expect((await cachedGet(paths[0]!, ctx.tokens.read)).status).toBe(200);
  });

  it('GET /tokens and GET /tokens/{id} stored before a token expires answer without it from that instant', async () => {
    const admin = client(ctx.app, ADMIN_TOKEN);
    const list = '/tokens?sort=id:desc&size=100';
    // Both stored and served before it expires: with an expiry further ahead again if the machine took
    // longer than that.
    const {
      instant: expiry,
      value: { id, one, total },
    } = await beforeInstant(3000, async (instant) => {
      const made = await admin.post('/tokens', { scopes: ['read'], name: 'listed until expiry', expires_at: new Date(instant).toISOString() });
      const { id } = made.json<{ id: number }>();
      const one = `/tokens/${id}`;
      for (const path of [list, one]) {
        await get(path, ctx.tokens.admin);
        await get(path, ctx.tokens.admin);
      }
      const listed = await cachedGet(list, ctx.tokens.admin);
      const total = Number(listed.headers.get('x-total-count'));
      expect(((await listed.json()) as { id: number }[]).map((t) => t.id)).toContain(id);
      expect((await cachedGet(one, ctx.tokens.admin)).status).toBe(200);
      return { id, one, total };
    });

    await past(expiry);
    const after = await get(list, ctx.tokens.admin);
    expect(after.status).toBe(200);
    expect(((await after.json()) as { id: number }[]).map((t) => t.id)).not.toContain(id);
    expect(after.headers.get('x-total-count')).toBe(String(total - 1));
    const gone = await get(one, ctx.tokens.admin);
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('conditional requests still get 304, and metrics count answers from the cache', async () => {
    const artist = await createArtist(api, 'Conditional');
    const path = `/artists/${artist.id}`;
    const first = await get(path, ctx.tokens.read);
    await get(path, ctx.tokens.read);
    await cachedGet(path, ctx.tokens.read);
    const notModified = await get(path, ctx.tokens.read, { 'if-none-match': first.headers.get('etag')! });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');

    const metric = async () => {
      const text = await (await get('/metrics', ADMIN_TOKEN)).text();
      const line = text.split('\n').find((l) => l.startsWith('http_requests_total{method="GET",route="/artists/:artist_id",status_code="200"}'));
      return Number(line?.split(' ')[1] ?? 0);
    };
    const counted = await metric();
    const before = { hits: hits(), sent };
    await cachedGet(path, ctx.tokens.read);
    await cachedGet(path, ctx.tokens.read);
    const made = sent - before.sent;
    expect(hits() - before.hits).toBe(2);
    // Every request counted once, whichever way it was answered.
    expect(await metric()).toBe(counted + made);
    // /metrics itself is not a cacheable route: two reads in a row differ.
    expect(await (await get('/metrics', ADMIN_TOKEN)).text()).not.toBe(await (await get('/metrics', ADMIN_TOKEN)).text());
  });
});

describe('response cache: what an answer read decides whether it is stored', () => {
  it('an answer that read a table no version covers, or nothing at all, is never stored', async () => {
    let calls = 0;
    const ctx = await buildTestApp({}, (app) => {
      // Routes that say their answers may be stored, but read what no version covers (the event log) or nothing.
      // The events recorded: on PostgreSQL those not yet published wait in events_pending (docs/events.md).
      const recorded = sqlite ? sql`(select count(*) from events)` : sql`(select count(*) from events) + (select count(*) from events_pending)`;
      app.get('/test/events-count', { config: { scope: 'read', cached: true } }, async () => {
        const { rows } = await sql<{ n: number | string }>`select ${recorded} as n`.execute(app.db);
        return { n: Number(rows[0]!.n) };
      });
      app.get('/test/users-and-events', { config: { scope: 'read', cached: true } }, async () => {
        const { rows } = await sql<{ n: number | string }>`select (select count(*) from users) + ${recorded} as n`.execute(app.db);
        return { n: Number(rows[0]!.n) };
      });
      app.get('/test/nothing', { config: { cached: true } }, async () => ({ n: ++calls }));
    });
    try {
      const base = await listening(ctx);
      const api = client(ctx.app, ctx.tokens.write);
      const read = async (path: string) =>
        (await (await fetch(base + path, { headers: { authorization: `Bearer ${ctx.tokens.read}` } })).json()) as { n: number };
      const stores = () => ctx.app.responseCache.stats().stores;
      for (const path of ['/test/events-count', '/test/users-and-events']) {
        const before = await read(path);
        await read(path);
        await read(path);
        await createArtist(api, `Event for ${path}`); // an event written: only the event log (and artists) moved
        expect((await read(path)).n).toBeGreaterThan(before.n);
      }
      expect([(await read('/test/nothing')).n, (await read('/test/nothing')).n, (await read('/test/nothing')).n]).toEqual([1, 2, 3]);
      expect(stores()).toBe(0);
      expect(ctx.app.responseCache.stats().hits).toBe(0);
    } finally {
      await ctx.close();
    }
  });
});

describe('response cache logging', () => {
  it('logs a cached answer with the same two lines, and the same fields, as an answer Fastify gives', async () => {
    const entries: LogEntry[] = [];
    const ctx = await buildTestApp({}, undefined, (entry) => entries.push(entry));
    try {
      const base = await listening(ctx);
      const artist = await createArtist(client(ctx.app, ctx.tokens.write));
      const read = () => fetch(`${base}/artists/${artist.id}`, { headers: { authorization: `Bearer ${ctx.tokens.read}` } });
      const first = await read(); // through Fastify, not stored (asked for the first time)
      expect((await read()).status).toBe(200); // through Fastify again, stored
      const second = await read(); // from the cache
      expect(await second.text()).toBe(await first.text());
      expect(ctx.app.responseCache.stats().hits).toBe(1);
      const linesOf = (res: Response) => {
        const id = res.headers.get('x-request-id');
        const lines = entries.filter((e) => e.reqId === id && (e.msg === 'incoming request' || e.msg === 'request completed'));
        return lines.map(({ msg, req, res: answer }) => ({ msg, req, res: answer }));
      };
      const viaFastify = linesOf(first);
      const cached = linesOf(second);
      expect(viaFastify).toHaveLength(2);
      expect(cached).toEqual(viaFastify.map((line) => (line.req ? { ...line, req: { ...line.req, remotePort: expect.any(Number) } } : line)));
      expect(cached[0]!.req).toMatchObject({ method: 'GET', url: `/artists/${artist.id}`, remoteAddress: '127.0.0.1' });
    } finally {
      await ctx.close();
    }
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
        for (let ask = 0; ask < 2; ask++) {
          const res = await fetch(`${base}/artists?size=${size}`, { headers: { authorization: `Bearer ${ctx.tokens.read}` } });
          expect(res.status).toBe(200);
        }
      }
      const stats = ctx.app.responseCache.stats();
      expect(stats.bytes).toBeLessThanOrEqual(64 * 1024);
      expect(stats.stores).toBe(60);
      expect(stats.entries).toBeLessThan(60);
    } finally {
      await ctx.close();
    }
  });

  /** An app limited to 5 requests per minute per token, listening, with one artist; `get` reads it with a token. */
  async function withRateLimit(test: (ctx: TestContext, get: (token: string) => Promise<Response>) => Promise<void>) {
    const ctx = await buildTestApp({ rateLimitPerMinute: 5 });
    try {
      const base = await listening(ctx);
      const artist = await createArtist(client(ctx.app, ctx.tokens.write));
      await test(ctx, (token) => fetch(`${base}/artists/${artist.id}`, { headers: { authorization: `Bearer ${token}` } }));
    } finally {
      await ctx.close();
    }
  }

  it("with rate limiting on, a cached answer counts in its token's budget and carries its own RateLimit headers", async () => {
    await withRateLimit(async (ctx, get) => {
      const remaining: string[] = [];
      let body = '';
      for (let i = 0; i < 5; i++) {
        const res = await get(ctx.tokens.read);
        expect(res.status).toBe(200);
        expect(res.headers.get('ratelimit-limit')).toBe('5');
        expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
        expect(Number(res.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);
        remaining.push(res.headers.get('ratelimit-remaining')!);
        if (i === 0) body = await res.text();
        else expect(await res.text()).toBe(body);
      }
      expect(remaining).toEqual(['4', '3', '2', '1', '0']);
      expect(ctx.app.responseCache.stats().hits).toBe(3); // the first two through Fastify (stored the second time)
      const limited = await get(ctx.tokens.read);
      expect(limited.status).toBe(429);
      expect(limited.headers.get('ratelimit-remaining')).toBe('0');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await limited.json()) as { code: string }).code).toBe('TOO_MANY_REQUESTS');
      // Another token has a budget of its own, through Fastify and then from the cache.
      for (const left of ['4', '3', '2']) {
        const admin = await get(ctx.tokens.admin);
        expect(admin.status).toBe(200);
        expect(admin.headers.get('ratelimit-remaining')).toBe(left);
      }
    });
  });

  it('with rate limiting on, an address blocked after failed authentications still gets its cached answer with a valid token', async () => {
    await withRateLimit(async (ctx, get) => {
      expect((await get(ctx.tokens.read)).status).toBe(200);
      expect((await get(ctx.tokens.read)).status).toBe(200); // stored
      const before = ctx.app.responseCache.stats().hits;
      for (let i = 0; i < 5; i++) expect((await get(`mc_guess_${i}`)).status).toBe(401);
      const guess = await get('mc_guess_5');
      expect(guess.status).toBe(429);
      expect(((await guess.json()) as { message: string }).message).toMatch(/failed authentication/);
      const valid = await get(ctx.tokens.read);
      expect(valid.status).toBe(200);
      expect(ctx.app.responseCache.stats().hits).toBe(before + 1);
    });
  });
});
