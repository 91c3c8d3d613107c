import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../database.js';
import { buildTestApp, client, errorBody, type TestContext } from '../helpers.js';
import { startRedis, type TestRedis } from '../redis.js';

// Two instances over one database and one Redis (REDIS_URL): the rate limit is one budget for both,
// not one each. Each instance's first three requests made its test tokens (the admin's bucket).

const PER_MINUTE = 20;
let redis: TestRedis;
let database: TestDatabase;
let a: TestContext;
let b: TestContext;

beforeAll(async () => {
  redis = await startRedis();
  database = await freshDatabase();
  a = await buildTestApp({ databaseUrl: database.url, redisUrl: redis.url, rateLimitPerMinute: PER_MINUTE });
  b = await buildTestApp({ databaseUrl: database.url, redisUrl: redis.url, rateLimitPerMinute: PER_MINUTE });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await database.drop();
  await redis.stop();
});

describe('rate limits with REDIS_URL, two instances', () => {
  it('spends one budget per token across both: the second instance refuses once it is spent', async () => {
    const token = a.tokens.read;
    for (let i = 1; i <= 12; i++) {
      const res = await client(a.app, token).get('/artists');
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-remaining']).toBe(String(PER_MINUTE - i));
    }
    for (let i = 13; i <= PER_MINUTE; i++) {
      const res = await client(b.app, token).get('/artists');
      expect(res.statusCode).toBe(200);
      expect(res.headers['ratelimit-remaining']).toBe(String(PER_MINUTE - i));
    }
    for (const app of [b.app, a.app]) {
      const limited = await client(app, token).get('/artists');
      expect(limited.statusCode).toBe(429);
      expect(errorBody(limited)).toEqual({ code: 'TOO_MANY_REQUESTS', message: expect.stringMatching(/^Rate limit of 20 requests per minute exceeded/) });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.headers['ratelimit-remaining']).toBe('0');
    }
    // Another token has its own budget on both.
    expect((await client(b.app, a.tokens.write).get('/artists')).statusCode).toBe(200);
  });

  it('shares the failed-authentication lockout of an address across both', async () => {
    const guess = (app: TestContext['app'], i: number) =>
      app.inject({ method: 'GET', url: '/artists', headers: { authorization: `Bearer guess-${i}` }, remoteAddress: '10.4.4.4' });
    // At most 30 failures a minute, fewer when the rate limit is lower: 20 here, half on each instance.
    const lockoutAfter = Math.min(PER_MINUTE, 30);
    for (let i = 0; i < lockoutAfter; i++) expect((await guess(i % 2 === 0 ? a.app : b.app, i)).statusCode).toBe(401);
    const blocked = await guess(b.app, 99);
    expect(blocked.statusCode).toBe(429);
    expect(errorBody(blocked).message).toMatch(/failed authentication attempts/);
    expect(blocked.headers['ratelimit-limit']).toBe(String(lockoutAfter));
    expect(blocked.headers['ratelimit-remaining']).toBe('0');
    expect(blocked.headers['ratelimit-reset']).toBe(blocked.headers['retry-after']);
    // A valid token from that address still passes, on either instance.
    const valid = await a.app.inject({ method: 'GET', url: '/artists', headers: { authorization: `Bearer ${b.tokens.admin}` }, remoteAddress: '10.4.4.4' });
    expect(valid.statusCode).toBe(200);
  });
});
