import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, client, createArtist, errorBody, type TestContext } from '../helpers.js';

let ctx: TestContext;

beforeAll(async () => {
  ctx = await buildTestApp();
});
afterAll(() => ctx.close());

const sample = (text: string, name: string, labels: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
};

describe('GET /metrics', () => {
  it('counts requests and their latency by route pattern and status, in Prometheus text format', async () => {
    const writer = client(ctx.app, ctx.tokens.write);
    const artist = await createArtist(writer);
    const started = performance.now();
    await client(ctx.app, ctx.tokens.read).get(`/artists/${artist.id}`);
    await client(ctx.app, ctx.tokens.read).get(`/artists/${artist.id}`);
    const readSeconds = (performance.now() - started) / 1000;
    await client(ctx.app, ctx.tokens.read).get('/artists/999999');
    await client(ctx.app, ctx.tokens.read).get('/no/such/route/42');

    const res = await client(ctx.app, ctx.tokens.admin).get('/metrics');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.body;
    expect(sample(text, 'http_requests_total', 'method="GET",route="/artists/:artist_id",status_code="200"')).toBe(2);
    expect(sample(text, 'http_requests_total', 'method="GET",route="/artists/:artist_id",status_code="404"')).toBe(1);
    expect(sample(text, 'http_requests_total', 'method="POST",route="/artists",status_code="201"')).toBe(1);
    expect(sample(text, 'http_requests_total', 'method="GET",route="unmatched",status_code="404"')).toBe(1);
    expect(text).not.toContain('/no/such/route'); // raw URLs never become labels
    expect(sample(text, 'http_request_duration_seconds_count', 'method="GET",route="/artists/:artist_id",status_code="200"')).toBe(2);
    expect(text).toContain('http_request_duration_seconds_bucket{le="0.005",method="GET",route="/artists/:artist_id",status_code="200"}');
    const series = 'method="GET",route="/artists/:artist_id",status_code="200"';
    const buckets = ['0.001', '0.0025', '0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '+Inf'].map((le) =>
      sample(text, 'http_request_duration_seconds_bucket', `le="${le}",${series}`),
    );
    // Cumulative buckets ending at the count; the sum is the seconds observed.
    expect(buckets.every((n, i) => n !== undefined && (i === 0 || n >= buckets[i - 1]!))).toBe(true);
    expect(buckets.at(-1)).toBe(2);
    expect(sample(text, 'http_request_duration_seconds_sum', series)).toBeGreaterThan(0);
    // In seconds, and within the time the two reads took as the client saw it.
    expect(sample(text, 'http_request_duration_seconds_sum', series)).toBeLessThanOrEqual(readSeconds);
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
  });

  it("reports the process's peak resident memory (VmHWM), at least its resident memory now", async () => {
    const text = (await client(ctx.app, ctx.tokens.admin).get('/metrics')).body;
    const value = (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1]);
    const status = readFileSync('/proc/self/status', 'utf8');
    const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)![1]) * 1024;
    // The peak only grows: between the scrape and the read of /proc after it, at most what it grew since.
    expect(value('process_resident_memory_peak_bytes')).toBeGreaterThanOrEqual(value('process_resident_memory_bytes'));
    expect(value('process_resident_memory_peak_bytes')).toBeLessThanOrEqual(kib('VmHWM'));
    expect(value('process_resident_memory_peak_bytes')).toBeGreaterThan(0);
  });

  it('is for admin and metrics tokens only', async () => {
    expect((await client(ctx.app).get('/metrics')).statusCode).toBe(401);
    const res = await client(ctx.app, ctx.tokens.write).get('/metrics');
    expect(res.statusCode).toBe(403);
    expect(errorBody(res).code).toBe('FORBIDDEN');
  });
});

describe('GET /metrics with a connection pool', () => {
  it('reports the pool use the connection gives (PostgreSQL pools do)', async () => {
    const { buildApp } = await import('../../src/app.js');
    const { connect } = await import('../../src/db/connect.js');
    const { makeConfig } = await import('../../src/config.js');
    const config = makeConfig({ databaseUrl: 'sqlite::memory:', logLevel: 'silent', adminToken: 'metrics-admin-token-0123456789' });
    const connection = { ...connect(config), poolStats: () => ({ total: 4, idle: 1, waiting: 2, max: 10 }) };
    const app = await buildApp(config, { connection });
    try {
      const text = (await client(app, 'metrics-admin-token-0123456789').get('/metrics')).body;
      expect(text).toMatch(/^db_pool_connections 4$/m);
      expect(text).toMatch(/^db_pool_idle_connections 1$/m);
      expect(text).toMatch(/^db_pool_in_use_connections 3$/m);
      expect(text).toMatch(/^db_pool_waiting_requests 2$/m);
      expect(text).toMatch(/^db_pool_max_connections 10$/m);
    } finally {
      await app.close();
    }
  });
});

describe('GET /metrics with rate limiting', () => {
  it('counts the requests rate limiting refused', async () => {
    // Four a minute per token: enough for the set-up's three token creations by the bootstrap token.
    const limited = await buildTestApp({ rateLimitPerMinute: 4 });
    try {
      const reader = client(limited.app, limited.tokens.read);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i += 1) statuses.push((await reader.get('/artists')).statusCode);
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
      const text = (await client(limited.app, limited.tokens.admin).get('/metrics')).body;
      expect(text).toMatch(/^rate_limit_refusals_total 1$/m);
    } finally {
      await limited.close();
    }
  });
});

describe('GET /metrics with the response cache', () => {
  it("reports the cache's hits, stores, bytes and entries as the cache counts them", async () => {
    const cached = await buildTestApp();
    try {
      await cached.app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(cached.app.server.address() as { port: number }).port}`;
      const get = (path: string, token: string) => fetch(base + path, { headers: { authorization: `Bearer ${token}` } });
      await createArtist(client(cached.app, cached.tokens.write));
      // A repeated GET is stored the second time and answered from the cache from the third time on
      // (test/http/response-cache.test.ts).
      for (let i = 0; i < 4; i += 1) expect((await get('/artists', cached.tokens.read)).status).toBe(200);
      const text = await (await get('/metrics', cached.tokens.admin)).text();
      const stats = cached.app.responseCache.stats();
      expect(stats.hits).toBe(2);
      expect(text).toMatch(/^response_cache_hits_total 2$/m);
      expect(text).toMatch(new RegExp(`^response_cache_stores_total ${stats.stores}$`, 'm'));
      expect(text).toMatch(new RegExp(`^response_cache_bytes ${stats.bytes}$`, 'm'));
      expect(text).toMatch(new RegExp(`^response_cache_entries ${stats.entries}$`, 'm'));
      expect(stats.bytes).toBeGreaterThan(0);
    } finally {
      await cached.close();
    }
  });

  it('counts the writes that shared a commit and the commits that carried them', async () => {
    const api = client(ctx.app, ctx.tokens.write);
    const admin = client(ctx.app, ctx.tokens.admin);
    const counter = (text: string, name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? 'NaN');
    const artist = await createArtist(api, 'Batched');
    const album = (await api.post(`/artists/${artist.id}/albums`, { name: 'Shared commits', year: 2001, image: 'https://img.example.com/b.jpg' })).json<{
      id: number;
    }>();
    const before = (await admin.get('/metrics')).body;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => api.post(`/artists/${artist.id}/albums/${album.id}/songs`, { name: `Song ${i}`, time: '01:00' })),
    );
    for (const res of answers) expect(res.statusCode).toBe(201);
    const after = (await admin.get('/metrics')).body;
    expect(counter(after, 'db_batched_writes_total') - counter(before, 'db_batched_writes_total')).toBe(8);
    const batches = counter(after, 'db_write_batches_total') - counter(before, 'db_write_batches_total');
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(batches).toBeLessThanOrEqual(8);
  });
});
